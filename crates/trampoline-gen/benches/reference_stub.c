/* A launcher the way the reference makes one: C, compiled with `cc -fPIE
 * ... -ldl` for each link. Reads /proc/self/exe, drops the file name, joins
 * EXEC_RELPATH (given with -D), and execv's it with the same argv. Used
 * only as the benchmark's comparison point. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    (void)argc;
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len == -1) {
        perror("readlink /proc/self/exe");
        return 1;
    }
    self[len] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash) {
        fprintf(stderr, "no directory in '%s'\n", self);
        return 1;
    }
    *slash = '\0';
    char *target = malloc(strlen(self) + 1 + strlen(EXEC_RELPATH) + 1);
    if (!target) {
        return 1;
    }
    strcpy(target, self);
    strcat(target, "/");
    strcat(target, EXEC_RELPATH);
    execv(target, argv);
    fprintf(stderr, "could not exec %s: %s\n", target, strerror(errno));
    return 1;
}
