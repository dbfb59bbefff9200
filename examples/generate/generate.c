/* generate.c: greedy text generation with a decoder odlac compiled with symbolic dims T (new
 * tokens) and P (cached tokens), as gpt.py exports it: inputs idx [1, T], past_k and past_v
 * [L, 1, H, P, D]; outputs logits [1, T, V], present_k and present_v [L, 1, H, P + T, D].
 *
 *   generate [--ids] VOCAB PROMPT [STEPS]
 *
 * VOCAB is a file of the model's characters, byte i being token i; PROMPT is text in them. The
 * prompt runs once (P = 0, T = its length), then each step runs the last token alone (T = 1)
 * with the cache of all before it, fed back from the previous run's present_k/present_v, and
 * takes the most likely next token. Prints the prompt and the generated text, or with --ids the
 * generated token ids. Stops at STEPS tokens (default 200) or when the cache is full. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"

int main(int argc, char **argv) {
  static const odla_int64 logits_top[] = NET_OUTPUT_0_SHAPE;
  net_instance *inst = NULL;
  net_dims dims;
  unsigned char vocab[256];
  size_t vocab_size, prompt_len, cache_len, i;
  long steps = 200, k;
  int ids = 0, status;
  odla_int64 *idx;
  float *past_k, *past_v, *present_k, *present_v, *logits;
  const long vocab_count = (long)logits_top[NET_OUTPUT_0_RANK - 1];
  const char *prompt;
  FILE *f;
  if (argc > 1 && strcmp(argv[1], "--ids") == 0) {
    ids = 1;
    ++argv;
    --argc;
  }
  if (argc < 3 || argc > 4 || (argc == 4 && (steps = atol(argv[3])) < 1)) {
    fprintf(stderr, "usage: generate [--ids] VOCAB PROMPT [STEPS]\n");
    return 2;
  }
  f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  vocab_size = fread(vocab, 1, sizeof vocab, f);
  fclose(f);
  if ((long)vocab_size != vocab_count) {
    fprintf(stderr, "%s: %lu characters, the model has %ld tokens\n", argv[1],
            (unsigned long)vocab_size, vocab_count);
    return 1;
  }
  prompt = argv[2];
  prompt_len = strlen(prompt);
  if (prompt_len < NET_DIM_T_MIN || prompt_len > NET_DIM_T_MAX) {
    fprintf(stderr, "the prompt has %lu characters; the model takes %d to %d at once\n",
            (unsigned long)prompt_len, NET_DIM_T_MIN, NET_DIM_T_MAX);
    return 1;
  }
  /* The cache at its largest: present_k holds P + T tokens. */
  cache_len = NET_OUTPUT_1_COUNT;
  idx = malloc(prompt_len * sizeof *idx);
  past_k = malloc(cache_len * sizeof *past_k);
  past_v = malloc(cache_len * sizeof *past_v);
  present_k = malloc(cache_len * sizeof *present_k);
  present_v = malloc(cache_len * sizeof *present_v);
  logits = malloc(NET_OUTPUT_0_COUNT * sizeof *logits);
  if (!idx || !past_k || !past_v || !present_k || !present_v || !logits)
    return 1;
  for (i = 0; i < prompt_len; ++i) {
    const unsigned char *at = memchr(vocab, (unsigned char)prompt[i], vocab_size);
    if (!at) {
      fprintf(stderr, "the prompt's character '%c' is not in %s\n", prompt[i], argv[1]);
      return 1;
    }
    idx[i] = at - vocab;
  }
  if ((status = net_create(&inst)) != 0) {
    fprintf(stderr, "net_create: odla_status %d\n", status);
    return 1;
  }
  dims.T = (odla_int64)prompt_len;
  dims.P = 0;
  if (!ids)
    fputs(prompt, stdout);
  for (k = 0; k < steps; ++k) {
    const float *last;
    long best = 0, v;
    float *swap;
    if ((status = net_run_shaped(inst, &dims, idx, past_k, past_v, logits, present_k, present_v)) !=
        0) {
      fprintf(stderr, "net_run_shaped: odla_status %d\n", status);
      return 1;
    }
    last = logits + (size_t)(dims.T - 1) * (size_t)vocab_count;
    for (v = 1; v < vocab_count; ++v)
      if (last[v] > last[best])
        best = v;
    if (ids)
      printf("%ld ", best);
    else
      putchar(vocab[best]);
    /* The present cache is the next run's past: [L, 1, H, P + T, D], dense. */
    swap = past_k, past_k = present_k, present_k = swap;
    swap = past_v, past_v = present_v, present_v = swap;
    dims.P += dims.T;
    dims.T = 1;
    idx[0] = best;
    if (dims.P > NET_DIM_P_MAX)
      break;
  }
  putchar('\n');
  net_destroy(inst);
  free(idx);
  free(past_k);
  free(past_v);
  free(present_k);
  free(present_v);
  free(logits);
  return 0;
}
