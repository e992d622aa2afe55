#!/usr/bin/env python3
"""self_traps.py: own traps, round trips and cost a sample, two libraries.

Each bench/program at scale 1 runs under BASE's and NEW's libwitch.so by
turns (interleaved), WITCH_SEED 1..SEEDS, at WITCH_RATE=2000 and at the
default budget, and the medians of each profile's stats are printed as a
Markdown table: samples, the sampled instructions' own traps
(traps_self), round trips (a signal or a #DB each), round trips a sample,
samples a CPU-second, and the fractions.  Then the predicted-bytes checks
(predict_value_ok / predict_value_miss) of NEW's runs.

usage: bench/self_traps.py BASE_BUILD NEW_BUILD [--client C] [--seeds N]
                           [--programs P,...]
  BUILD dirs hold libwitch.so; NEW_BUILD's bench/programs and witch are used
  for both (the programs do not depend on the library).
"""
import argparse
import json
import os
import statistics as st
import subprocess
import sys
import tempfile

KEYS = ['samples', 'traps', 'traps_self', 'round_trips', 'cost_handler_ns', 'cost_kernel_ns',
        'cpu_ns', 'predict_value_ok', 'predict_value_miss']


def run_one(lib, witch, prog, client, seed, rate, prof):
    env = dict(os.environ, LD_PRELOAD=lib, WITCH_CLIENT=client, WITCH_SEED=str(seed),
               WITCH_OUTPUT=prof)
    env.pop('WITCH_RATE', None)
    env.pop('WITCH_BUDGET', None)
    if rate:
        env['WITCH_RATE'] = rate
    subprocess.run([prog, '1'], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    out = subprocess.run([witch, 'report', '--json', prof], capture_output=True, text=True,
                         check=True).stdout
    j = json.loads(out)
    return dict(fraction=j['fraction'], **{k: j['stats'].get(k, 0) for k in KEYS})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('base')
    ap.add_argument('new')
    ap.add_argument('--client', default='silent')
    ap.add_argument('--seeds', type=int, default=3)
    ap.add_argument('--programs', default='lz,sort,hashtab,stencil,interp,strings')
    a = ap.parse_args()
    builds = {'base': a.base, 'new': a.new}
    witch = os.path.join(a.new, 'witch')
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        prof = os.path.join(tmp, 'p.prof')
        for rate in ('2000', ''):
            for p in a.programs.split(','):
                prog = os.path.join(a.new, 'bench', 'programs', p)
                for seed in range(1, a.seeds + 1):
                    for name, d in builds.items():  # interleaved
                        r = run_one(os.path.join(d, 'libwitch.so'), witch, prog, a.client, seed,
                                    rate, prof)
                        rows.append(dict(rate=rate or 'budget', prog=p, build=name, **r))
    print('| rate | program | build | samples | own traps | round trips | round trips a sample '
          '| samples a CPU-second | fraction (each seed) |')
    print('|---|---|---|---:|---:|---:|---:|---:|---|')
    for rate in ('2000', 'budget'):
        for p in a.programs.split(','):
            for name in builds:
                r = [x for x in rows if x['rate'] == rate and x['prog'] == p and x['build'] == name]
                med = lambda k: st.median(x[k] for x in r)
                sps = st.median(x['samples'] / (x['cpu_ns'] / 1e9) for x in r if x['cpu_ns'])
                rts = st.median(x['round_trips'] / max(1, x['samples']) for x in r)
                fr = ', '.join('%.3f' % x['fraction'] for x in r)
                print(f"| {rate} | {p} | {name} | {med('samples'):.0f} | {med('traps_self'):.0f} "
                      f"| {med('round_trips'):.0f} | {rts:.2f} | {sps:.0f} | {fr} |")
    new = [x for x in rows if x['build'] == 'new']
    print('\npredict_value_ok / predict_value_miss (new, all runs): %d / %d'
          % (sum(x['predict_value_ok'] for x in new), sum(x['predict_value_miss'] for x in new)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
