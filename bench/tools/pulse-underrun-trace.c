// pulse-underrun-trace: what PulseAudio tells a client shaped like gong's (float32 mono 48 kHz,
// LATENCY_MS in four periods, PA_STREAM_EARLY_REQUESTS, one non-threaded main loop) around a stall
// of the client, for bench/RESULTS.md ("A stopped process through gong's PulseAudio client").
//
//   cc -O2 -o pulse-underrun-trace pulse-underrun-trace.c -lpulse
//   parec -d gong_test.monitor --format=float32le --rate=48000 --channels=1 --raw rec.raw &
//   ./pulse-underrun-trace SECONDS STALL_AT STALL_FOR [LATENCY_MS] > trace.txt; kill %1
//   python3 pulse-underrun-gaps.py rec.raw
//
// Each sample written encodes its own stream frame ((n mod 2^20) + 1) / 2^21, exact in float32,
// so the recording says which stream frame the sink played at each of its own frames. Printed:
// every write, the underflow callback (and the server's underflow index), the started callback,
// and every timing report (read and write index, sink latency, playing, since_underrun), with
// where it puts stream frame 0 and, once the stream plays again after an underrun, the loss
// measured from the last report taken while it did not (MEASURE).
// SINK names a sink (default: the server's).
#include <pulse/pulseaudio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdint.h>
#include <sys/time.h>

static pa_mainloop *ml; static pa_context *ctx; static pa_stream *st;
static int64_t t0;
static int64_t mono(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return (int64_t)t.tv_sec*1000000000+t.tv_nsec;}
static int64_t wall(void){struct timespec t;clock_gettime(CLOCK_REALTIME,&t);return (int64_t)t.tv_sec*1000000000+t.tv_nsec;}
static double ms(int64_t n){return (n-t0)/1e6;}
static int64_t written=0; // frames
static void underflow(pa_stream*s,void*u){printf("%10.3f UNDERFLOW index=%lld frames (written %lld)\n",ms(mono()),(long long)pa_stream_get_underflow_index(s)/4,(long long)written);}
static int wantReport=0;
static void started(pa_stream*s,void*u){printf("%10.3f STARTED\n",ms(mono()));wantReport=1;}
static void overflow(pa_stream*s,void*u){printf("%10.3f OVERFLOW\n",ms(mono()));}
static int64_t lastStamp=0;
static void report(void){
  const pa_timing_info*i=pa_stream_get_timing_info(st); if(!i)return;
  int64_t stamp=(int64_t)i->timestamp.tv_sec*1000000000+i->timestamp.tv_usec*1000LL;
  if(stamp==lastStamp) return;
  lastStamp=stamp;
  static int haveAnchor=0; static double anchorV, anchorAt; static int measured=0;
  int64_t off0=wall()-mono(); double atms=(stamp-off0-t0)/1e6;
  if(!i->playing && pa_stream_get_underflow_index(st)>=0 && i->read_index==pa_stream_get_underflow_index(st)){haveAnchor=1; anchorV=i->read_index/4+i->since_underrun/4; anchorAt=atms+i->sink_usec/1e3;}
  if(i->playing && haveAnchor && measured<6){measured++; double L=anchorV+(atms+i->sink_usec/1e3-anchorAt)*48.0-i->read_index/4; printf("MEASURE L=%.1f (dt %.1f ms)\n",L,atms-anchorAt);}
  int64_t off=wall()-mono(); int64_t m=stamp-off;
  // frame 0 heard at: m + sink - read/rate
  int64_t r=i->read_index/4, w=i->write_index/4;
  double origin=(m-t0)/1e6 + i->sink_usec/1e3 - r/48.0;
  printf("%10.3f REPORT at=%.3f playing=%d read=%lld write=%lld sink_us=%llu origin=%.3f rcorrupt=%d wcorrupt=%d since_underrun=%llu\n",
    ms(mono()),(m-t0)/1e6,i->playing,(long long)r,(long long)w,(unsigned long long)i->sink_usec,origin,i->read_index_corrupt,i->write_index_corrupt,(unsigned long long)i->since_underrun);
}
int main(int argc,char**argv){
  double seconds=atof(argv[1]), stallAt=atof(argv[2]), stallFor=atof(argv[3]); int lat=argc>4?atoi(argv[4]):500;
  ml=pa_mainloop_new(); ctx=pa_context_new(pa_mainloop_get_api(ml),"trace");
  pa_context_connect(ctx,NULL,PA_CONTEXT_NOAUTOSPAWN,NULL);
  while(pa_context_get_state(ctx)!=PA_CONTEXT_READY) pa_mainloop_iterate(ml,1,NULL);
  pa_sample_spec ss={PA_SAMPLE_FLOAT32LE,48000,1};
  st=pa_stream_new(ctx,"trace",&ss,NULL);
  pa_buffer_attr a={(uint32_t)-1,(uint32_t)(lat*48*4),(uint32_t)-1,(uint32_t)(lat*48*4/4),(uint32_t)-1};
  pa_stream_set_underflow_callback(st,underflow,NULL);
  pa_stream_set_overflow_callback(st,overflow,NULL);
  pa_stream_set_started_callback(st,started,NULL);
  pa_stream_connect_playback(st,getenv("SINK"),&a,PA_STREAM_EARLY_REQUESTS,NULL,NULL);
  while(pa_stream_get_state(st)!=PA_STREAM_READY) pa_mainloop_iterate(ml,1,NULL);
  const pa_buffer_attr*g=pa_stream_get_buffer_attr(st);
  t0=mono();
  printf("granted tlength=%u minreq=%u prebuf=%u maxlength=%u\n",g->tlength/4,g->minreq/4,g->prebuf/4,g->maxlength/4);
  size_t period=g->minreq; float buf[48000];
  int64_t lastReq=0; int stalled=0; pa_operation*op=NULL;
  while(ms(mono())<seconds*1000){
    if(!stalled && ms(mono())>=stallAt*1000){stalled=1; printf("%10.3f STALL begins (written %lld)\n",ms(mono()),(long long)written); fflush(stdout);
      struct timespec d={(time_t)stallFor,(long)((stallFor-(time_t)stallFor)*1e9)}; nanosleep(&d,NULL); printf("%10.3f STALL ends\n",ms(mono()));}
    size_t n=pa_stream_writable_size(st);
    while(n>=period){
      size_t fr=period/4; for(size_t k=0;k<fr;k++){int64_t f=written+k; buf[k]=(float)((f%1048576)+1)/2097152.0f;}
      pa_stream_write(st,buf,period,NULL,0,PA_SEEK_RELATIVE); written+=fr;
      printf("%10.3f WRITE %zu -> written %lld\n",ms(mono()),fr,(long long)written);
      n=pa_stream_writable_size(st);
    }
    if(wantReport || mono()-lastReq>100000000 || (op && pa_operation_get_state(op)!=PA_OPERATION_RUNNING && !pa_stream_get_timing_info(st)->playing)){ wantReport=0; if(op)pa_operation_unref(op); op=pa_stream_update_timing_info(st,NULL,NULL); lastReq=mono();}
    pa_mainloop_iterate(ml,0,NULL);
    report();
    struct timespec d={0,5000000}; nanosleep(&d,NULL);
  }
  fflush(stdout); return 0;
}
