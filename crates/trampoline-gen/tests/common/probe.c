/* The target the launcher tests exec: reports what it received.
 *
 * stdout: its own real path, argc, every argv element, then every
 * environment entry, each followed by a NUL byte. Then, when asked through
 * the environment, it exits with PROBE_EXIT or kills itself with
 * PROBE_SIGNAL, so tests can see both pass through the launcher. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static void put(const char *s) { fwrite(s, 1, strlen(s) + 1, stdout); }

int main(int argc, char **argv) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n < 0 ? 0 : n] = 0;
    put(exe);
    char count[32];
    snprintf(count, sizeof count, "%d", argc);
    put(count);
    for (int i = 0; i < argc; i++) put(argv[i]);
    for (char **e = environ; *e; e++) put(*e);
    fflush(stdout);
    const char *sig = getenv("PROBE_SIGNAL");
    if (sig) {
        signal(atoi(sig), SIG_DFL);
        raise(atoi(sig));
    }
    const char *code = getenv("PROBE_EXIT");
    return code ? atoi(code) : 0;
}
