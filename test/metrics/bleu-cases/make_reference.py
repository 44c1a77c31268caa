"""Regenerates reference.json: the numbers sacreBLEU itself computes for every case here.

Not needed by the tests (they only read reference.json). Run from the repository root with a
sacreBLEU checkout on PYTHONPATH (its source is not part of this project), e.g.:

  PYTHONPATH=/tmp/sacrebleu /usr/bin/python3 test/metrics/bleu-cases/make_reference.py

Each case is <name>.hyp with <name>.ref (and <name>.ref2 for a second reference stream), read the
way sacreBLEU's command line reads files (UTF-8, lines split on "\\n" only, each line rstripped).
Every case is scored with the default BLEU(); a few also with non-default options. For default
runs the command-line output (`-f text -w 2`) and the 13a tokenization of each hypothesis
line are recorded as well.
"""
import glob
import json
import os
import subprocess
import sys

import sacrebleu
from sacrebleu.metrics import BLEU

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = {
    'punctuation': [{'lowercase': True}],
    'unicode': [{'lowercase': True}],
    'zero-4gram': [{'smooth_method': 'none'}, {'smooth_method': 'floor'},
                   {'smooth_method': 'add-k'}, {'smooth_method': 'floor', 'smooth_value': 0.5}],
    'short-hyps': [{'effective_order': True}],
    'no-trigrams': [{'effective_order': True}, {'max_ngram_order': 2}],
}


def read_lines(path):
    with open(path, encoding='utf-8', newline='\n') as f:
        return [line.rstrip() for line in f]


def main():
    out = {
        'sacrebleu_version': sacrebleu.__version__,
        'python': sys.version.split()[0],
        'command': 'PYTHONPATH=/tmp/sacrebleu /usr/bin/python3 test/metrics/bleu-cases/make_reference.py',
        'cases': [],
    }
    for hyp_path in sorted(glob.glob(os.path.join(HERE, '*.hyp'))):
        name = os.path.basename(hyp_path)[:-4]
        ref_paths = [os.path.join(HERE, name + '.ref')]
        if os.path.exists(os.path.join(HERE, name + '.ref2')):
            ref_paths.append(os.path.join(HERE, name + '.ref2'))
        hyps = read_lines(hyp_path)
        refs = [read_lines(p) for p in ref_paths]
        for options in [{}] + VARIANTS.get(name, []):
            s = BLEU(**options).corpus_score(hyps, refs)
            entry = {
                'case': name,
                'refs': [os.path.basename(p) for p in ref_paths],
                'options': options,
                'score': s.score, 'counts': list(s.counts), 'totals': list(s.totals),
                'precisions': list(s.precisions), 'bp': s.bp,
                'sys_len': s.sys_len, 'ref_len': s.ref_len,
                'formatted': s.format(),
            }
            if not options:
                bleu = BLEU()
                entry['hyp_tokenized'] = [bleu._preprocess_segment(h) for h in hyps]
                cmd = [sys.executable, '-m', 'sacrebleu', *ref_paths, '-i', hyp_path,
                       '-m', 'bleu', '-f', 'text', '-w', '2']
                entry['cli'] = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
            out['cases'].append(entry)
    with open(os.path.join(HERE, 'reference.json'), 'w', encoding='utf-8') as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write('\n')


if __name__ == '__main__':
    main()
