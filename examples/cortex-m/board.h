/* board.h: what the example application needs of the board it runs on: a console, a counter
 * of cycles (instructions under QEMU -icount), and the end of the run. board_cortexm.c
 * implements it with Arm semihosting and SysTick, board_host.c with stdio and no counter,
 * for the same application on a PC. Nothing here uses stdio or the heap on the target. */
#ifndef BOARD_H_
#define BOARD_H_

#include <stdint.h>

/* Writes text, or a signed number in decimal, to the console. */
void board_write(const char *text);
void board_write_int(long long value);
/* A free-running count of core cycles since board_start (0 where the board has none). Under
 * qemu-system-arm -icount shift=0 one count is one instruction: a proxy for cycles. */
uint64_t board_cycles(void);
/* Starts the counter; returns 0 where the board has none. */
int board_start(void);
/* The lowest address the stack has reached since board_start painted it, as bytes below its
 * top (0 where the board does not measure it; board_cortexm.c paints 64 KiB, so 65536 means
 * at least that). */
uint32_t board_stack_used(void);

#endif /* BOARD_H_ */
