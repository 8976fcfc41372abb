/* A library that needs its sibling; has init/fini code and arrays. */
extern int sib_value(void);
static int ready;
__attribute__((constructor)) static void setup(void) { ready = 1; }
__attribute__((destructor)) static void teardown(void) { ready = 0; }
int main_value(void) { return ready ? sib_value() + 1 : -1; }
