/* Opens argv[1] by name (found through this program's RUNPATH), calls
   argv[2] through dlsym on that handle, then opens argv[3] (the real
   library's SONAME): says whether both handles give the same function and
   how many times a file named argv[3] is mapped from its start. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    if (argc != 4) return 2;
    void *alias = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!alias) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    int (*answer)(void) = (int (*)(void))dlsym(alias, argv[2]);
    if (!answer) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    void *real = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
    if (!real) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps) return 1;
    char line[4096];
    int loads = 0;
    while (fgets(line, sizeof line, maps)) {
        unsigned long start, end, offset;
        char perms[8];
        char *path = strchr(line, '/');
        if (!path || sscanf(line, "%lx-%lx %7s %lx", &start, &end, perms, &offset) != 4)
            continue;
        path[strcspn(path, "\n")] = 0;
        if (offset == 0 && strcmp(strrchr(path, '/') + 1, argv[3]) == 0) loads++;
    }
    int same = dlsym(real, argv[2]) == (void *)answer;
    printf("answer %d, same function %s, %s mapped %d time(s)\n", answer(),
           same ? "yes" : "no", argv[3], loads);
    return 0;
}
