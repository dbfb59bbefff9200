#!/usr/bin/python3
"""Known answers of odla_PostProcess for tests/runtime/test_api_ops.c, from numpy.

An independent implementation of the decoding the reference backend defines
(runtime_stubs/reference/ops_yolo.c; docs/backends.md): darknet's YOLOv3 yolo layer,
letterbox correction and per-class greedy NMS, written here with numpy arrays. The heads'
logits follow the formula the C test uses, logit(head, k) = ((k * 37 + 11 * head + 5) % 97
- 48) / 16 over each head's flattened [1, 3 * (5 + C), H, W] data (exact in float32), with
C = 2 classes, bb13 2 x 2 (so a 64 x 64 network input), and a 100 x 60 original image.
Prints the C initializers the test embeds: per class the kept count and the kept rows.
Usage: postprocess_reference.py
"""

import numpy as np

C, G, ORIG_W, ORIG_H = 2, 2, 100.0, 60.0
ANCHORS = [[(116, 90), (156, 198), (373, 326)], [(30, 61), (62, 45), (59, 119)],
           [(10, 13), (16, 30), (33, 23)]]


def head_logits(head, h, w):
    k = np.arange(3 * (5 + C) * h * w, dtype=np.int64)
    return (((k * 37 + 11 * head + 5) % 97 - 48) / 16.0).astype(np.float32).reshape(
        3, 5 + C, h, w).astype(np.float64)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def main():
    net_w, net_h = 32.0 * G, 32.0 * G
    if net_w / ORIG_W < net_h / ORIG_H:
        new_w, new_h = net_w, np.floor(ORIG_H * net_w / ORIG_W)
    else:
        new_w, new_h = np.floor(ORIG_W * net_h / ORIG_H), net_h
    boxes, scores = [], []
    for head in range(3):
        h = w = G << head
        t = head_logits(head, h, w)
        jj, ii = np.meshgrid(np.arange(w), np.arange(h))
        for a in range(3):
            bx = (jj + sigmoid(t[a, 0])) / w
            by = (ii + sigmoid(t[a, 1])) / h
            bw = ANCHORS[head][a][0] * np.exp(t[a, 2]) / net_w
            bh = ANCHORS[head][a][1] * np.exp(t[a, 3]) / net_h
            x = (bx - (net_w - new_w) / 2 / net_w) * net_w / new_w * ORIG_W
            y = (by - (net_h - new_h) / 2 / net_h) * net_h / new_h * ORIG_H
            boxes.append(np.stack([x, y, bw * net_w / new_w * ORIG_W,
                                   bh * net_h / new_h * ORIG_H], -1).reshape(-1, 4))
            scores.append((sigmoid(t[a, 4])[None] * sigmoid(t[a, 5:])).reshape(C, -1))
    boxes = np.concatenate(boxes)
    scores = np.concatenate(scores, axis=1)
    lo, hi = boxes[:, :2] - boxes[:, 2:] / 2, boxes[:, :2] + boxes[:, 2:] / 2
    area = boxes[:, 2] * boxes[:, 3]
    print(f'/* {len(boxes)} boxes */')
    for c in range(C):
        cand = np.nonzero(scores[c] > 0.5)[0]
        order = cand[np.lexsort((cand, -scores[c][cand]))]
        kept = []
        for b in order:
            if kept:
                k = np.array(kept)
                wh = np.clip(np.minimum(hi[k], hi[b]) - np.maximum(lo[k], lo[b]), 0, None)
                inter = wh[:, 0] * wh[:, 1]
                if np.any(inter / (area[k] + area[b] - inter) > 0.45):
                    continue
            kept.append(b)
        print(f'/* class {c}: {len(cand)} candidates, {len(kept)} kept */')
        print(f'static const unsigned kept_{c} = {len(kept)};')
        print(f'static const float rows_{c}[][5] = {{')
        for b in kept:
            print('  {' + ', '.join(f'{v:.9g}f' for v in (*boxes[b], scores[c][b])) + '},')
        print('};')


if __name__ == '__main__':
    main()
