"""Reads the engine's batch file (`attention-debugger batches`; format in src/engine/train/batchFile.ts and
bench/README.md): little-endian int32 words, a header "ADBF", version 1, M validation batches, N training
batches, then M + N records [B, S, T, src B*S, tgt_in B*T, tgt_out B*T]. Standard library only.

    python3 bench/batch_file.py FILE   prints {"validation": [...], "training": [...]}, each batch
                                       {"src", "tgtIn", "tgtOut"} as lists of rows (for the engine's test)
"""
import array
import json
import sys

MAGIC = b"ADBF"
VERSION = 1


class Batch:
    """One record: rows, widths and the three id matrices as flat int32 arrays (row-major)."""

    def __init__(self, rows, src_width, tgt_width, words):
        self.rows, self.src_width, self.tgt_width = rows, src_width, tgt_width
        s, t = rows * src_width, rows * tgt_width
        self.src, self.tgt_in, self.tgt_out = words[:s], words[s:s + t], words[s + t:s + 2 * t]

    def lists(self):
        def matrix(flat, width):
            return [list(flat[r * width:(r + 1) * width]) for r in range(self.rows)]

        return {"src": matrix(self.src, self.src_width), "tgtIn": matrix(self.tgt_in, self.tgt_width),
                "tgtOut": matrix(self.tgt_out, self.tgt_width)}


class BatchFile:
    """The validation batches (read at once) and the training batches, read one at a time in order."""

    def __init__(self, path):
        self.path = path
        self.file = open(path, "rb")
        if self.file.read(4) != MAGIC:
            raise ValueError(f"{path}: not a batch file (no ADBF header)")
        version, validation, training = self._words(3)
        if version != VERSION:
            raise ValueError(f"{path}: batch file version {version}, this reader knows {VERSION}")
        self.training_batches = training
        self.validation = [self._record() for _ in range(validation)]
        self.taken = 0

    def _words(self, n):
        raw = self.file.read(4 * n)
        if len(raw) != 4 * n:
            raise ValueError(f"{self.path}: ends inside a record (wanted {4 * n} bytes, got {len(raw)})")
        words = array.array("i")
        assert words.itemsize == 4
        words.frombytes(raw)
        if sys.byteorder == "big":
            words.byteswap()
        return words

    def _record(self):
        rows, s, t = self._words(3)
        return Batch(rows, s, t, self._words(rows * (s + 2 * t)))

    def next_training(self):
        """The next training batch in the engine's order, or None once all N have been taken."""
        if self.taken == self.training_batches:
            return None
        self.taken += 1
        return self._record()

    def close(self):
        self.file.close()


if __name__ == "__main__":
    f = BatchFile(sys.argv[1])
    training = []
    while (b := f.next_training()) is not None:
        training.append(b.lists())
    print(json.dumps({"validation": [b.lists() for b in f.validation], "training": training}))
