/* firmware_main.c: a test program of tests/runtime as Cortex-M firmware (test_build.py
 * ArmKernelsTest): its main, compiled as test_main, runs once newlib's semihosting stdio is
 * set up (librdimon); the start-up of examples/cortex-m ends the run with its status. */
void initialise_monitor_handles(void);
int test_main(void);

int main(void) {
  initialise_monitor_handles();
  return test_main();
}
