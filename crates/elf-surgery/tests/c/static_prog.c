/* A static executable: no dynamic section, nothing to edit. */
#include <stdio.h>
int main(void) { puts("static"); return 0; }
