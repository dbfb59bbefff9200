/* classify.c: the example firmware's application: the digits classifier that odlac compiled
 * with --no-heap (digits.h, from models/digits) on the held-out digits of heldout.h
 * (make_heldout.py), run with the reference backend. The instance, its arena and every
 * structure of the backend live in `memory`, a static buffer of the size the header states;
 * nothing touches the heap (no_heap.c stops the run if anything does) and nothing uses stdio
 * (board.h writes the output; the backend's messages reach it through ODLA's logger hook).
 * It first shows what too little memory gives, then prints the first few predictions, the
 * memory and stack it used, the instructions per inference where the board counts them, the
 * accuracy, and each class it gave, one line per digit, for tests/build to compare with the
 * host's. */
#include <ODLA/odla_log.h>

#include "board.h"
#include "digits.h"
#include "heldout.h"

enum { CLASSES = 10, SHOWN = 4, PAINT = 0xA5 };

static unsigned char memory[DIGITS_MEMORY_BYTES];

static void line(const char *text, long long value, const char *rest) {
  board_write(text);
  board_write_int(value);
  board_write(rest);
}

/* The backend's messages (built without stdio, it writes none itself). */
static void log_to_board(const char *file, int line, const char *func, odla_log_level level,
                         const char *msg) {
  (void)file, (void)line, (void)level;
  board_write("odla: ");
  board_write(func);
  board_write(": ");
  board_write(msg);
  board_write("\n");
}

/* Bytes of `memory` written since it was painted: the highest one that changed. */
static long long memory_used(void) {
  long long i = (long long)sizeof memory;
  while (i > 0 && memory[i - 1] == PAINT)
    --i;
  return i;
}

int main(void) {
  digits_instance *net = 0;
  float probs[CLASSES];
  int i, k, correct = 0, status, counting = board_start();
  uint64_t least = 0, total = 0;
  odla_SetLogger(log_to_board);
  /* Room for the arena but only 512 bytes for the backend's structures: a status and a
   * message, then the memory is the application's again. */
  status = digits_create_in(memory, 63 + 64 + (DIGITS_ARENA_BYTES + 63) / 64 * 64 + 512, &net);
  line("with too little memory: odla_status ", status, "\n");
  for (i = 0; i < (int)sizeof memory; ++i)
    memory[i] = PAINT;
  if ((status = digits_create_in(memory, sizeof memory, &net)) != 0) {
    line("digits_create_in failed: odla_status ", status, "\n");
    return 1;
  }
  line("digits: ", HELDOUT_COUNT, " held-out images, ");
  line("", DIGITS_WEIGHTS_BYTES, " bytes of weights, ");
  line("", DIGITS_MEMORY_BYTES, " bytes of memory (arena ");
  line("", DIGITS_ARENA_BYTES, ")\n");
  for (i = 0; i < HELDOUT_COUNT; ++i) {
    int best = 0;
    uint64_t start = board_cycles(), spent;
    status = digits_run(net, heldout_pixels[i], probs);
    spent = board_cycles() - start;
    if (status != 0) {
      line("digits_run failed on image ", i, ": odla_status ");
      line("", status, "\n");
      digits_destroy(net);
      return 1;
    }
    if (i == 0 || spent < least)
      least = spent;
    total += spent;
    for (k = 1; k < CLASSES; ++k)
      if (probs[k] > probs[best])
        best = k;
    correct += best == heldout_labels[i];
    if (i < SHOWN) {
      line("  image ", i, ": true ");
      line("", heldout_labels[i], ", predicted ");
      line("", best, "\n");
    }
    line("class ", i, " ");
    line("", best, "\n");
  }
  line("memory used: ", memory_used(), " of ");
  line("", (long long)sizeof memory, " bytes\n");
  line("stack used: ", board_stack_used(), " bytes\n");
  if (counting) {
    line("instructions per inference: ", (long long)least, " (least), ");
    line("", (long long)(total / HELDOUT_COUNT), " (mean)\n");
  }
  digits_destroy(net);
  line("accuracy: ", correct, "/");
  line("", HELDOUT_COUNT, "\n");
  return 0;
}
