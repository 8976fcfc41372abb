/* A dynamic executable: glibc's start code imports __libc_start_main. */
#include <stdio.h>

int main(void) {
    puts("hello");
    return 0;
}
