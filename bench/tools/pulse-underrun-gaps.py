# pulse-underrun-gaps: reads a recording of what pulse-underrun-trace played (float32 mono, each
# sample its stream frame) and prints each run of consecutive stream frames and each gap between
# runs: the silence the sink played, and the stream frames it never played.
import sys, struct, array
a = array.array('f'); a.frombytes(open(sys.argv[1],'rb').read())
# map recording index -> stream frame
prev=None; first=None; runs=[]
start=None
for k,v in enumerate(a):
    if v==0.0: continue
    n = round(v*2097152)-1
    if prev is None:
        first=(k,n); start=(k,n)
    else:
        pk,pn=prev
        if not (k==pk+1 and (n==pn+1 or n==0 and pn==1048575)):
            runs.append((start,prev)); start=(k,n)
    prev=(k,n)
runs.append((start,prev))
for (sk,sn),(ek,en) in runs:
    print(f"rec {sk}..{ek} stream {sn}..{en}")
for r1,r2 in zip(runs,runs[1:]):
    (ek,en)=r1[1]; (sk,sn)=r2[0]
    print(f"gap: after stream frame {en} (rec {ek}) next stream frame {sn} at rec {sk}: silence {sk-ek-1} frames, stream jump {sn-en-1}")
