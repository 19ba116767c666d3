"""Two `kiln bench` JSON reports of the same machine, row by row: for the
CUDA and wgpu rows both hold, the median over rows of new time / old time
at 1 Mi and at 64 Mi, and every row more than 2% away.

    python3 benches/h100/compare.py OLD.json NEW.json
"""
import json,sys,statistics
def rows(p):
    d=json.load(open(p)); out={}
    for r in d['rows']:
        if r.get('backend')!='cuda' and r.get('backend')!='wgpu': continue
        out[(r['backend'],r['pattern'],r['dtype'],r['size'])]=r
    return d,out
_,old=rows(sys.argv[1]); _,new=rows(sys.argv[2])
keys=[k for k in new if k in old]
print(len(keys),"rows in both")
for sz,label in [(1<<20,'1 Mi'),(64<<20,'64 Mi')]:
    ks=[k for k in keys if k[3]==sz]
    rat=[new[k]['median_ms']/old[k]['median_ms'] for k in ks]
    print(f"{label}: {len(ks)} rows, median new/old time {statistics.median(rat):.4f}")
    for k,r in zip(ks,rat):
        if abs(r-1)>0.02: print(f"  beyond 2%: {k[1]} {k[2]} {label} old {old[k]['median_ms']:.4f} new {new[k]['median_ms']:.4f} ms ratio {r:.3f}")
