/* startup.c: the Cortex-M start-up of the example firmware (examples/cortex-m): the vector
 * table, the reset handler (the .data image copied from flash, .bss zeroed, the FPU enabled
 * where the core has one, then main) and a fault handler that ends the run with an error
 * status instead of hanging. The memory regions come from the linker script. */
#include <stdint.h>

extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end, __stack_top;
int main(void);
void semihost_exit(int status);

void Reset_Handler(void);
void Fault_Handler(void);
void SysTick_Handler(void); /* board_cortexm.c's cycle counter */

/* Initial stack pointer, reset, NMI, HardFault, MemManage, BusFault, UsageFault, 4 reserved,
 * SVCall, DebugMonitor, reserved, PendSV, SysTick. */
__attribute__((section(".vectors"), used)) void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)&__stack_top,
    Reset_Handler,
    Fault_Handler,
    Fault_Handler,
    Fault_Handler,
    Fault_Handler,
    Fault_Handler,
    0,
    0,
    0,
    0,
    Fault_Handler,
    Fault_Handler,
    0,
    Fault_Handler,
    SysTick_Handler,
};

void Reset_Handler(void) {
  uint32_t *src = &__data_load, *dst = &__data_start;
  while (dst < &__data_end)
    *dst++ = *src++;
  for (dst = &__bss_start; dst < &__bss_end;)
    *dst++ = 0;
#if defined(__ARM_FP)
  /* CPACR: full access to the coprocessors 10 and 11 (the FPU) */
  *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
  __asm volatile("dsb\n\tisb");
#endif
  semihost_exit(main());
}

void Fault_Handler(void) { semihost_exit(3); }
