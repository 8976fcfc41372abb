/* An executable that prints a value from its libraries. */
#include <stdio.h>
extern int main_value(void);
int main(void) {
    printf("value=%d\n", main_value());
    return 0;
}
