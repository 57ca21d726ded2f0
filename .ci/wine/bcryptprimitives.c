/* ProcessPrng for Wine 8 (Debian bookworm), which lacks bcryptprimitives.dll.
 * Rust's standard library on Windows takes its random bytes from it (hash
 * seeds), so without it no Rust program starts under that Wine. Wine 9 and
 * later ship the DLL; .ci/windows installs this one only where it is missing.
 * Built with mingw-w64: RtlGenRandom (advapi32's SystemFunction036) does the work. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
