/* board_host.c: board.h on a PC, so that the example application runs there too (the test
 * compares its classes with the firmware's): stdio, and no cycle counter. */
#include "board.h"

#include <stdio.h>

void board_write(const char *text) { fputs(text, stdout); }
void board_write_int(long long value) { printf("%lld", value); }
uint64_t board_cycles(void) { return 0; }
int board_start(void) { return 0; }
uint32_t board_stack_used(void) { return 0; }
