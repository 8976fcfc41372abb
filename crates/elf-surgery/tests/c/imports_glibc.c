/* Imports at several glibc symbol versions (closefrom: GLIBC_2.34, statx:
   GLIBC_2.28, puts: GLIBC_2.2.5), one from libgcc_s (GCC_3.3) and a weak,
   unversioned reference. Linked, never run. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

extern int _Unwind_Backtrace(void *, void *);
extern void optional_hook(void) __attribute__((weak));

int glibc_imports(int fd) {
    struct statx st;
    closefrom(fd);
    puts("closing");
    if (optional_hook)
        optional_hook();
    _Unwind_Backtrace(0, 0);
    return statx(AT_FDCWD, ".", 0, STATX_BASIC_STATS, &st);
}
