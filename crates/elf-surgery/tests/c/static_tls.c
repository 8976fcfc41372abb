/* A library with initial-exec thread-local storage, as sanitizer runtimes
 * have: the linker marks it DF_STATIC_TLS and gives it a PT_TLS segment. */
__thread char static_tls_block[65536] __attribute__((tls_model("initial-exec")));
char *static_tls_block_of_this_thread(void) { return static_tls_block; }
