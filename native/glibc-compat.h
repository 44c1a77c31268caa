/*
 * Binds the glibc functions whose default version is newer than glibc 2.28 to their older versions,
 * so that the addon built here (Debian 12, glibc 2.36) also loads where VS Code's server runs with an
 * older glibc (it needs 2.28: Debian 10, Ubuntu 20.04, RHEL 8). dlopen and dlsym moved into libc in
 * 2.34 and log got a new version in 2.29; the old versions behave the same for this addon. Built in
 * with `-include` by scripts/build-native.mjs on Linux; test/vscode/vsix checks the packaged addon.
 */
#if defined(__linux__)
#include <features.h> /* defines __GLIBC__: -include puts this file before every other header */
#endif
#if defined(__linux__) && defined(__GLIBC__)
#if defined(__x86_64__)
__asm__(".symver dlopen,dlopen@GLIBC_2.2.5");
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
__asm__(".symver log,log@GLIBC_2.2.5");
#elif defined(__aarch64__)
__asm__(".symver dlopen,dlopen@GLIBC_2.17");
__asm__(".symver dlsym,dlsym@GLIBC_2.17");
__asm__(".symver log,log@GLIBC_2.17");
#endif
#endif
