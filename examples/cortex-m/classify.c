/* classify.c: the example firmware's application: the digits classifier that odlac compiled
 * (digits.h, from models/digits) on the held-out digits of heldout.h (make_heldout.py), run
 * on the Cortex-M with the reference backend. It prints the first few predictions, the
 * accuracy, and each class it gave, one line per digit, for tests/embedded to compare with
 * the host's. */
#include <stdio.h>

#include "digits.h"
#include "heldout.h"

enum { CLASSES = 10, SHOWN = 4 };

int main(void) {
  digits_instance *net = NULL;
  float probs[CLASSES];
  int i, k, correct = 0, status = digits_create(&net);
  if (status != 0) {
    printf("digits_create failed: odla_status %d\n", status);
    return 1;
  }
  printf("digits on the Cortex-M: %d held-out images, %d bytes of weights, %d-byte arena\n",
         HELDOUT_COUNT, DIGITS_WEIGHTS_BYTES, DIGITS_ARENA_BYTES);
  for (i = 0; i < HELDOUT_COUNT; ++i) {
    int best = 0;
    status = digits_run(net, heldout_pixels[i], probs);
    if (status != 0) {
      printf("digits_run failed on image %d: odla_status %d\n", i, status);
      digits_destroy(net);
      return 1;
    }
    for (k = 1; k < CLASSES; ++k)
      if (probs[k] > probs[best])
        best = k;
    correct += best == heldout_labels[i];
    if (i < SHOWN)
      printf("  image %d: true %d, predicted %d\n", i, heldout_labels[i], best);
    printf("class %d %d\n", i, best);
  }
  digits_destroy(net);
  printf("accuracy: %d/%d\n", correct, HELDOUT_COUNT);
  return 0;
}
