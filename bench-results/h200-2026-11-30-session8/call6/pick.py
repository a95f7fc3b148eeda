# Prints c4 when it beats c1 by at least 1% on both non-causal shapes and loses no more than 1%
# causal (means of the rounds), else c1.
import glob, json, sys
r = sys.argv[1]
def mean(v, d, causal):
    xs = [row['flash_tflops'] for f in glob.glob(f'{r}/coop_{v}_r*.json')
          for row in json.load(open(f))['rows'] if row['head_dim'] == d and row['causal'] == causal]
    return sum(xs) / len(xs)
win = all(mean('c4', d, False) >= 1.01 * mean('c1', d, False) for d in (64, 128)) and \
      all(mean('c4', d, True) >= 0.99 * mean('c1', d, True) for d in (64, 128))
for d in (64, 128):
    for c in (False, True):
        print(f'd={d} causal={c}: c1 {mean("c1", d, c):.1f} c4 {mean("c4", d, c):.1f}', file=sys.stderr)
print('c4' if win else 'c1')
