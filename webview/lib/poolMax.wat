;; poolMax (webview/lib/attention.ts) in WebAssembly with 128-bit SIMD: the same output cells,
;; bit for bit, about three times faster in Chromium than the scalar JavaScript loop, which a 144-map
;; grid of 512 x 512 maps spends most of its drawing time in (bench/README.md, issue 34).
;; scripts/build-wasm.mjs compiles this file into poolMaxWasm.ts; test/lint/wasm.test.ts checks that
;; the two agree.
;;
;; The map is a rows x cols float32 matrix at byte offset $src. Output row y covers input rows
;; [r0, r1) and output column x covers input columns [c0, c1), the blocks attention.ts computes. For
;; each output row: the maxima of every input column over the row block go to $acc (cols floats), four
;; columns at a time in one register; then each output cell takes the maximum of its columns in $acc.
;; Both use "a < b ? b : a" (f32x4.pmax, and f32.gt below), as the scalar loop's "if (v > m) m = v"
;; starting from -inf: a NaN is never taken.
(module
  (memory (export "memory") 1)
  (func (export "poolMax")
    (param $src i32) (param $rows i32) (param $cols i32)
    (param $outRows i32) (param $outCols i32) (param $acc i32) (param $out i32)
    (local $y i32) (local $r0 i32) (local $r1 i32) (local $r i32)
    (local $c i32) (local $c1 i32) (local $x i32)
    (local $stride i32) (local $vecEnd i32) (local $p i32)
    (local $m f32) (local $v f32) (local $vm v128)
    (local.set $stride (i32.shl (local.get $cols) (i32.const 2)))
    (local.set $vecEnd (i32.and (local.get $cols) (i32.const -4)))
    (block $rowsDone
      (loop $eachRow
        (br_if $rowsDone (i32.ge_u (local.get $y) (local.get $outRows)))
        ;; r0 = min(rows - 1, floor(y * rows / outRows)); r1 = max(r0 + 1, floor((y + 1) * rows / outRows))
        (local.set $r0 (i32.div_u (i32.mul (local.get $y) (local.get $rows)) (local.get $outRows)))
        (if (i32.ge_u (local.get $r0) (local.get $rows))
          (then (local.set $r0 (i32.sub (local.get $rows) (i32.const 1)))))
        (local.set $r1
          (i32.div_u (i32.mul (i32.add (local.get $y) (i32.const 1)) (local.get $rows)) (local.get $outRows)))
        (if (i32.le_u (local.get $r1) (local.get $r0))
          (then (local.set $r1 (i32.add (local.get $r0) (i32.const 1)))))
        ;; acc[c .. c + 4) = the maxima of columns c .. c + 3 over rows [r0, r1)
        (local.set $c (i32.const 0))
        (block $vectorsDone
          (loop $eachVector
            (br_if $vectorsDone (i32.ge_u (local.get $c) (local.get $vecEnd)))
            (local.set $vm (v128.const f32x4 -inf -inf -inf -inf))
            (local.set $p
              (i32.add (local.get $src)
                (i32.shl (i32.add (i32.mul (local.get $r0) (local.get $cols)) (local.get $c)) (i32.const 2))))
            (local.set $r (local.get $r0))
            (block $blockDone
              (loop $eachInputRow
                (br_if $blockDone (i32.ge_u (local.get $r) (local.get $r1)))
                (local.set $vm (f32x4.pmax (local.get $vm) (v128.load (local.get $p))))
                (local.set $p (i32.add (local.get $p) (local.get $stride)))
                (local.set $r (i32.add (local.get $r) (i32.const 1)))
                (br $eachInputRow)))
            (v128.store (i32.add (local.get $acc) (i32.shl (local.get $c) (i32.const 2))) (local.get $vm))
            (local.set $c (i32.add (local.get $c) (i32.const 4)))
            (br $eachVector)))
        ;; the last cols mod 4 columns, one at a time
        (block $tailDone
          (loop $eachTail
            (br_if $tailDone (i32.ge_u (local.get $c) (local.get $cols)))
            (local.set $m (f32.const -inf))
            (local.set $p
              (i32.add (local.get $src)
                (i32.shl (i32.add (i32.mul (local.get $r0) (local.get $cols)) (local.get $c)) (i32.const 2))))
            (local.set $r (local.get $r0))
            (block $tailBlockDone
              (loop $eachTailRow
                (br_if $tailBlockDone (i32.ge_u (local.get $r) (local.get $r1)))
                (local.set $v (f32.load (local.get $p)))
                (if (f32.gt (local.get $v) (local.get $m)) (then (local.set $m (local.get $v))))
                (local.set $p (i32.add (local.get $p) (local.get $stride)))
                (local.set $r (i32.add (local.get $r) (i32.const 1)))
                (br $eachTailRow)))
            (f32.store (i32.add (local.get $acc) (i32.shl (local.get $c) (i32.const 2))) (local.get $m))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (br $eachTail)))
        ;; out[y, x] = the maximum of acc over columns [c0, c1), c0 and c1 as r0 and r1
        (local.set $x (i32.const 0))
        (block $cellsDone
          (loop $eachCell
            (br_if $cellsDone (i32.ge_u (local.get $x) (local.get $outCols)))
            (local.set $c (i32.div_u (i32.mul (local.get $x) (local.get $cols)) (local.get $outCols)))
            (if (i32.ge_u (local.get $c) (local.get $cols))
              (then (local.set $c (i32.sub (local.get $cols) (i32.const 1)))))
            (local.set $c1
              (i32.div_u (i32.mul (i32.add (local.get $x) (i32.const 1)) (local.get $cols)) (local.get $outCols)))
            (if (i32.le_u (local.get $c1) (local.get $c))
              (then (local.set $c1 (i32.add (local.get $c) (i32.const 1)))))
            (local.set $m (f32.const -inf))
            (block $colsDone
              (loop $eachCol
                (br_if $colsDone (i32.ge_u (local.get $c) (local.get $c1)))
                (local.set $v (f32.load (i32.add (local.get $acc) (i32.shl (local.get $c) (i32.const 2)))))
                (if (f32.gt (local.get $v) (local.get $m)) (then (local.set $m (local.get $v))))
                (local.set $c (i32.add (local.get $c) (i32.const 1)))
                (br $eachCol)))
            (f32.store
              (i32.add (local.get $out)
                (i32.shl (i32.add (i32.mul (local.get $y) (local.get $outCols)) (local.get $x)) (i32.const 2)))
              (local.get $m))
            (local.set $x (i32.add (local.get $x) (i32.const 1)))
            (br $eachCell)))
        (local.set $y (i32.add (local.get $y) (i32.const 1)))
        (br $eachRow)))))
