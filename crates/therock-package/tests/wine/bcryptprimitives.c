/* bcryptprimitives.dll for Wine 8, which lacks it: Rust's Windows standard
   library (1.78 and newer) takes its random bytes from ProcessPrng, which
   this DLL forwards to RtlGenRandom (advapi32's SystemFunction036), the
   call the standard library made before. Tests put it on the DLL search
   path of the programs they run under Wine; it never ships. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
