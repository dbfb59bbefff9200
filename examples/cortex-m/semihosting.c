/* semihosting.c: the firmware's output and exit through Arm semihosting (the debugger or
 * emulator, here qemu-system-arm -semihosting, does the work): newlib's _write for stdout
 * and stderr, and the exit status. A board with a UART would write there instead. */
#include <stdint.h>
#include <sys/stat.h>

enum { SYS_OPEN = 0x01, SYS_WRITE = 0x05, SYS_EXIT_EXTENDED = 0x20 };

static int semihost(int op, void *arg) {
  register int r0 __asm__("r0") = op;
  register void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void semihost_exit(int status) {
  uint32_t block[2] = {0x20026u, (uint32_t)status}; /* ADP_Stopped_ApplicationExit */
  semihost(SYS_EXIT_EXTENDED, block);
  for (;;) {
  }
}

int _write(int fd, const char *buf, int len) {
  static int console = -1;
  uint32_t block[3];
  (void)fd;
  if (console < 0) {
    uint32_t open[3] = {(uint32_t)(uintptr_t) ":tt", 4 /* "w" */, 3};
    console = semihost(SYS_OPEN, open);
  }
  block[0] = (uint32_t)console;
  block[1] = (uint32_t)(uintptr_t)buf;
  block[2] = (uint32_t)len;
  return len - semihost(SYS_WRITE, block); /* the call returns the bytes not written */
}

/* What newlib's stdio asks of the console besides writing. */
int _isatty(int fd) { return fd <= 2; }
int _fstat(int fd, struct stat *st) {
  (void)fd;
  st->st_mode = S_IFCHR;
  return 0;
}
