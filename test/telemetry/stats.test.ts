/** Per-head attention statistics on hand-built maps, against values worked out by hand. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AttentionKind, AttentionMaps } from '../../src/protocol/attention';
import { diagonalKey, headStats } from '../../src/engine/telemetry/stats';

const near = (a: number | null, b: number, what: string, eps = 1e-6) =>
  assert.ok(a !== null && Math.abs(a - b) <= eps, `${what}: ${a} ≉ ${b}`);

function maps(kind: AttentionKind, heads: number[][][]): AttentionMaps {
  const q = heads[0].length;
  const k = heads[0][0].length;
  return { kind, shape: [1, heads.length, q, k], weights: Float32Array.from(heads.flat(2)) };
}

const third = 1 / 3;

test('encoder self: a uniform head and a previous-token head', () => {
  const s = headStats('encoder_self', [
    {
      maps: [
        maps('encoder_self', [
          [
            [third, third, third],
            [third, third, third],
            [third, third, third],
          ],
          [
            [1, 0, 0],
            [1, 0, 0],
            [0, 1, 0],
          ],
        ]),
      ],
    },
  ]);
  // Head 0: every row uniform over 3 keys: H = ln 3, normalised 1, max 1/3, 1/3 on every key.
  near(s.entropy[0], Math.log(3), 'entropy, uniform');
  near(s.entropy_norm[0], 1, 'normalised entropy, uniform');
  near(s.confidence[0], third, 'confidence, uniform');
  for (const stat of ['sink_first', 'sink_eos', 'offset_prev', 'offset_same', 'offset_next'] as const)
    near(s[stat][0], third, stat);
  // The argmax of a uniform row is its first key: one step back only in row 1 (of rows 1, 2).
  near(s.top_prev[0], 0.5, 'top_prev, uniform');
  near(s.top_next[0], 0, 'top_next, uniform');
  // Head 1: one-hot rows: H = 0, max 1; rows 1 and 2 look one step back; key 0 gets 2 of 3 rows.
  near(s.entropy[1], 0, 'entropy, one-hot');
  near(s.confidence[1], 1, 'confidence, one-hot');
  near(s.offset_prev[1], 1, 'offset −1');
  near(s.offset_same[1], third, 'offset 0');
  near(s.top_prev[1], 1, 'top_prev');
  near(s.sink_first[1], 2 / 3, 'first key');
  near(s.sink_eos[1], 0, 'EOS');
  assert.equal(s.diagonal[0], null, 'diagonal agreement is for cross attention only');
});

test('decoder self: entropies over the keys the causal mask leaves; no EOS, no next token', () => {
  const s = headStats('decoder_self', [
    {
      maps: [
        maps('decoder_self', [
          [
            [1, 0, 0],
            [0.5, 0.5, 0],
            [0.25, 0.25, 0.5],
          ],
        ]),
      ],
    },
  ]);
  const h2 = -(0.25 * Math.log(0.25) * 2 + 0.5 * Math.log(0.5)); // 1.0397
  near(s.entropy[0], (0 + Math.log(2) + h2) / 3, 'entropy');
  near(s.entropy_norm[0], (1 + h2 / Math.log(3)) / 2, 'normalised entropy (row 0 has one key: left out)');
  assert.equal(s.sink_eos[0], null);
  assert.equal(s.offset_next[0], null);
  near(s.offset_same[0], (1 + 0.5 + 0.5) / 3, 'offset 0');
});

test('cross attention on the reverse task: the mirrored diagonal, averaged over pairs', () => {
  // Source "4 5 6 </s>" (S′ = 3), decoder input "<s> 6 5 4": row q predicts source token 2 − q.
  assert.deepEqual(diagonalKey(0, 4, 4), { diagonal: 0, mirrored: 2 });
  assert.deepEqual(diagonalKey(2, 4, 4), { diagonal: 2, mirrored: 0 });
  const mirror = maps('cross', [
    [
      [0, 0, 1, 0],
      [0, 1, 0, 0],
      [1, 0, 0, 0],
      [0, 0, 0, 1],
    ],
  ]);
  const half = maps('cross', [
    [
      [0, 0, 0.5, 0.5],
      [0, 0.5, 0, 0.5],
      [0.5, 0, 0, 0.5],
      [0, 0, 0, 1],
    ],
  ]);
  const s = headStats('cross', [{ maps: [mirror] }, { maps: [half] }]);
  // Rows 0–2 of each pair (the last row predicts EOS): weight on the mirrored key 1 and 0.5.
  near(s.mirrored[0], 0.75, 'mirrored weight');
  near(s.top_mirrored[0], 1, 'argmax on the mirrored key (ties go to the first key)');
  near(s.diagonal[0], (1 / 3 + 0.5 / 3) / 2, 'diagonal weight: row 1 only');
  near(s.sink_eos[0], (0.25 + (0.5 * 3 + 1) / 4) / 2, 'weight on EOS, every row');
});

test('top_offset: the offset the largest weight keeps to most often, and its share where it was possible', () => {
  // Encoder self, 5 keys. Rows 2–4 look two keys back (offset −2, possible only in those 3 rows);
  // rows 0 and 1 look at key 4 (offsets +4 and +3, once each): the mode −2, in 3 of 3 rows.
  const back2 = [0, 1, 2, 3, 4].map((q) => [0, 1, 2, 3, 4].map((k) => (k === (q >= 2 ? q - 2 : 4) ? 0.8 : 0.05)));
  // Rows 0–2 look one key ahead, rows 3 and 4 at key 0: +1 (3 of the 4 rows where q + 1 exists) beats −3 and −4.
  const ahead = [0, 1, 2, 3, 4].map((q) => [0, 1, 2, 3, 4].map((k) => (k === (q <= 2 ? q + 1 : 0) ? 0.8 : 0.05)));
  const s = headStats('encoder_self', [{ maps: [maps('encoder_self', [back2, ahead])] }]);
  assert.deepEqual(s.top_offset, [-2, 1]);
  near(s.top_offset_share[0], 1, 'share of −2');
  near(s.top_offset_share[1], 3 / 4, 'share of +1');
  near(s.top_next[1], 3 / 4, 'top_next agrees with the share of +1');
  // A tie (offsets −1 and +1 once each, 0 never): the nearer, then the one back.
  const tie = headStats('encoder_self', [
    {
      maps: [
        maps('encoder_self', [
          [
            [0.1, 0.9],
            [0.9, 0.1],
          ],
        ]),
      ],
    },
  ]);
  assert.deepEqual(tie.top_offset, [-1]);
  near(tie.top_offset_share[0], 1, 'share of −1 (one row could)');
  // Cross attention has no relative position: null.
  const cross = headStats('cross', [{ maps: [maps('cross', [back2])] }]);
  assert.deepEqual(cross.top_offset, [null]);
  assert.deepEqual(cross.top_offset_share, [null]);
});
