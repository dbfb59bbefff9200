/* board_cortexm.c: board.h for a Cortex-M (examples/cortex-m): the console through Arm
 * semihosting (qemu-system-arm -semihosting; a board writes to its UART instead), the cycle
 * counter from SysTick at the core clock, and the stack measured by painting it. QEMU counts
 * SysTick in virtual time, which -icount shift=0 advances by 1 ns per instruction:
 * board_start calibrates how many instructions a tick is with a loop of a known count. */
#include "board.h"

#include <stddef.h>
#include <stdint.h>

enum { SYS_OPEN = 0x01, SYS_WRITE = 0x05, SYS_EXIT_EXTENDED = 0x20 };
enum { STACK_PAINT = 0x5AFE57AC, STACK_PAINTED = 64 * 1024 };

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)

extern uint32_t __stack_top;

static volatile uint32_t wraps;                     /* SysTick reloads since board_start */
static uint32_t per_tick_num = 1, per_tick_den = 1; /* cycles per tick, as a fraction */

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

/* To the host's standard output (":tt" opened for writing; SYS_WRITE0 would go to the
 * emulator's console, not to its standard output). */
void board_write(const char *text) {
  static int console = -1;
  uint32_t block[3];
  size_t n = 0;
  while (text[n])
    ++n;
  if (console < 0) {
    uint32_t open[3] = {(uint32_t)(uintptr_t) ":tt", 4 /* "w" */, 3};
    console = semihost(SYS_OPEN, open);
  }
  block[0] = (uint32_t)console;
  block[1] = (uint32_t)(uintptr_t)text;
  block[2] = (uint32_t)n;
  semihost(SYS_WRITE, block);
}

void board_write_int(long long value) {
  char digits[24];
  int n = (int)sizeof digits - 1;
  unsigned long long v = value < 0 ? 0ull - (unsigned long long)value : (unsigned long long)value;
  digits[n] = 0;
  do {
    digits[--n] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  if (value < 0)
    digits[--n] = '-';
  board_write(digits + n);
}

void SysTick_Handler(void) { ++wraps; }

static uint64_t ticks(void) {
  uint32_t w, v;
  do { /* a reload between the two reads shows as a changed count */
    w = wraps;
    v = SYST_CVR;
  } while (w != wraps);
  return (uint64_t)w * 0x1000000u + (0xFFFFFFu - v);
}

uint64_t board_cycles(void) { return ticks() * per_tick_num / per_tick_den; }

/* Paints the stack below the caller's frame, for board_stack_used. */
static void __attribute__((noinline)) paint_stack(void) {
  volatile uint32_t *p = (volatile uint32_t *)(uintptr_t)&__stack_top - STACK_PAINTED / 4;
  volatile uint32_t here;
  while (p < &here - 16)
    *p++ = STACK_PAINT;
}

uint32_t board_stack_used(void) {
  const uint32_t *p = (const uint32_t *)(uintptr_t)&__stack_top - STACK_PAINTED / 4;
  while (p < &__stack_top && *p == STACK_PAINT)
    ++p;
  return (uint32_t)((uintptr_t)&__stack_top - (uintptr_t)p);
}

int board_start(void) {
  uint64_t t0, t1;
  uint32_t n = 200000;
  paint_stack();
  SYST_RVR = 0xFFFFFFu;
  SYST_CVR = 0;
  SYST_CSR = 7;           /* enabled, interrupt on reload, the core clock */
  while (SYST_CVR == 0) { /* the first reload, from which ticks() counts */
  }
  /* 2n + 1 instructions (subs and a taken branch per turn, the last falls through). */
  t0 = ticks();
  __asm__ volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n) : : "cc");
  t1 = ticks();
  if (t1 == t0)
    return 0;
  per_tick_num = 2u * 200000u + 1u;
  per_tick_den = (uint32_t)(t1 - t0);
  return 1;
}
