// The phone's page: one self-contained file (no CDN, no framework), served from the binary.
// Edit it here; docs/remote.md says what it does, and its size is measured there.
extension RemotePage {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width,initial-scale=1,viewport-fit=cover">
        <meta name="color-scheme" content="light dark">
        <meta name="theme-color" content="#101010">
        <link rel="manifest" href="/manifest.webmanifest">
        <link rel="icon" href="/icon.svg">
        <title>gong</title>
        <style>
        :root{--bg:#f6f4ef;--fg:#1b1b1b;--mute:#666;--card:#fff;--line:#ddd6c8;--accent:#8a5a00;--warn:#a11;--ok:#2a6a2a}
        @media (prefers-color-scheme:dark){:root{--bg:#121212;--fg:#eee;--mute:#9a9a9a;--card:#1d1d1d;--line:#333;--accent:#d9b35b;--warn:#f77;--ok:#8c8}}
        body.night{--bg:#000;--fg:#a33;--mute:#722;--card:#080000;--line:#200;--accent:#c44;--warn:#f44;--ok:#a33}
        body.night *{transition:none!important;animation:none!important}
        body.night{color-scheme:dark}body.night button.main{background:#3a0c0c;color:#d44}
        body.night input[type=range]{-webkit-appearance:none;appearance:none;background:transparent;min-height:32px}
        body.night input[type=range]::-webkit-slider-runnable-track{height:6px;border-radius:3px;background:#200}
        body.night input[type=range]::-webkit-slider-thumb{-webkit-appearance:none;width:24px;height:24px;margin-top:-9px;border-radius:50%;background:#a33}
        *{box-sizing:border-box}
        body{margin:0;font:18px/1.4 system-ui,sans-serif;background:var(--bg);color:var(--fg);padding:0 0 env(safe-area-inset-bottom)}
        header{display:flex;align-items:center;justify-content:space-between;padding:12px 16px}
        h1{font-size:20px;margin:0}h2{font-size:16px;margin:0 0 8px;color:var(--mute);text-transform:uppercase;letter-spacing:.05em}
        section{background:var(--card);border:1px solid var(--line);border-radius:16px;margin:0 12px 12px;padding:16px}
        input[type=range]{accent-color:var(--accent)}
        button,select,input{font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:12px;min-height:52px;padding:0 14px}
        button{min-width:52px;font-weight:600;cursor:pointer}
        button:disabled{opacity:.55;cursor:default}
        button.main{background:var(--accent);color:var(--bg);border:0;width:100%;font-size:22px;min-height:72px}
        .row{display:flex;gap:8px;flex-wrap:wrap;margin-top:8px}.row>*{flex:1}
        .big{font-size:54px;font-variant-numeric:tabular-nums;font-weight:300;margin:4px 0}
        .mute{color:var(--mute);font-size:15px}
        #banner{display:none;background:var(--warn);color:var(--card);padding:12px 16px;font-weight:600}
        #note{display:none;background:var(--ok);color:var(--card);padding:10px 16px}
        #cue{position:fixed;inset:0;pointer-events:none;background:var(--accent);opacity:0}
        #cue.on{opacity:.35}
        .cal{display:grid;grid-template-columns:repeat(7,1fr);gap:4px}.cal i{aspect-ratio:1;border-radius:4px;background:var(--line)}
        .plan{list-style:none;margin:0;padding:0}.plan li{display:flex;justify-content:space-between;padding:6px 0;border-bottom:1px solid var(--line)}
        label{display:block;margin-top:8px}label input,label select{width:100%}
        details{margin-top:12px;border-top:1px solid var(--line);padding-top:8px}summary{min-height:44px;line-height:44px;cursor:pointer;font-weight:600}
        .two{display:grid;grid-template-columns:1fr 1fr;gap:0 8px}.two>*,.two input{min-width:0}.err{color:var(--warn);font-size:15px}
        [hidden]{display:none!important}
        </style>
        </head>
        <body>
        <div id="banner" role="alert">Cannot reach the box. The bells keep ringing there; trying again…</div>
        <div id="note" role="status"></div>
        <div id="cue" aria-hidden="true"></div>
        <header><h1>gong</h1><button id="nightBtn" aria-pressed="false" aria-label="Night mode">☾</button></header>

        <section id="pair" hidden aria-labelledby="pairH">
        <h2 id="pairH">Pair this phone</h2>
        <p class="mute">On the box, run <b>gong remote pair</b> and type the code it prints.</p>
        <label>Code<input id="code" inputmode="numeric" autocomplete="one-time-code" aria-label="Pairing code"></label>
        <label>This phone's name<input id="devname" aria-label="This phone's name" value="phone"></label>
        <div class="row"><button class="main" id="pairBtn">Pair</button></div>
        <p id="pairMsg" class="mute" role="status"></p>
        </section>

        <div id="app" hidden>
        <section aria-labelledby="sitH">
        <h2 id="sitH">Sit</h2>
        <div id="sitNone">
        <label>Pattern<select id="pattern" aria-label="Pattern"><option>two-phase</option><option>box</option><option>4-7-8</option><option>resonant</option><option>coherent</option><option>sigh</option><option>interval</option></select></label>
        <label>Length<input id="length" placeholder="20m, or open" aria-label="Length, or open"></label>
        <label>Start after<input id="delay" placeholder="10s" aria-label="Start delay"></label>
        <label>Device<input id="device" placeholder="(the box's own)" aria-label="Device"></label>
        <div class="row"><button class="main" id="startBtn">Start</button></div>
        </div>
        <div id="sitRun" hidden>
        <div id="sitTitle" class="mute"></div>
        <div id="phase"></div>
        <div class="big" id="phaseLeft" aria-live="off">–</div>
        <div class="mute"><span id="state"></span> · <span id="totalLeft"></span> left</div>
        <div class="row"><button class="main" id="toggleBtn" aria-label="Pause or resume">Pause</button></div>
        <div class="row"><button id="skipBtn">Skip phase</button><button id="stopBtn">Stop</button></div>
        <label>Gain <span id="gainV"></span><input id="gain" type="range" min="-30" max="6" step="1" aria-label="Gain in dB"></label>
        <p id="sitBy" class="mute" role="status"></p>
        </div>
        </section>

        <section aria-labelledby="bellsH">
        <h2 id="bellsH">Bells</h2>
        <div id="bellsNone" class="mute">gong bells is not running on the box.</div>
        <div id="bellsRun" hidden>
        <div class="mute" id="nextLabel">Next bell</div>
        <div class="big" id="nextLeft">–</div>
        <div id="nextAt" class="mute"></div>
        <div id="bellsPaused" class="mute"></div>
        <div class="row"><button id="b1h">Pause 1 h</button><button id="bToday">Pause today</button><button id="bResume">Resume</button></div>
        <div class="row"><button id="bRing">Ring now</button><button id="bNext">Pass over next</button></div>
        <ul class="plan" id="plan" aria-label="Today's bells"></ul>
        <details id="sched"><summary>Schedule</summary>
        <p class="mute">As in config.toml's [bells]: one of every, at, random.</p>
        <div class="two">
        <label>Every<input id="s_every" placeholder="e.g. 45m"></label><label>Random<input id="s_random" placeholder="e.g. 20m-60m"></label>
        </div>
        <label>At<input id="s_at" placeholder="e.g. 08:00,12:30"></label>
        <div class="two">
        <label>Active<input id="s_active" placeholder="all day"></label><label>Days<input id="s_days" placeholder="every day"></label>
        <label>Quiet<input id="s_quiet" placeholder="none"></label><label>Most a day<input id="s_max" inputmode="numeric" placeholder="no cap"></label>
        </div>
        <p id="schedMsg" class="mute" role="status"></p>
        <div class="row"><button id="schedBtn">Save schedule</button></div>
        </details>
        </div>
        </section>

        <section aria-labelledby="histH">
        <h2 id="histH">Practice</h2>
        <div id="hist" class="mute"></div>
        <div class="cal" id="cal" aria-label="Calendar of the last weeks"></div>
        <details id="addSit"><summary>Add a sit by hand</summary>
        <label>What<input id="a_pattern" value="sitting" aria-label="What you sat"></label>
        <div class="two">
        <label>Day<input id="a_day" type="date"></label><label>Began<input id="a_time" type="time" value="07:00"></label>
        </div>
        <label>Length<input id="a_length" placeholder="20m"></label>
        <p id="addMsg" class="mute" role="status"></p>
        <div class="row"><button id="addBtn">Add</button></div>
        </details>
        </section>
        <p class="mute" style="margin:0 16px 24px" id="clock"></p>
        </div>

        <script>
        "use strict";
        const $=id=>document.getElementById(id);
        let lastChange=null,offset=0,bestRtt=1e9,ws=null,lostAt=null,status=null,statusAt=0,bells=null,bellsAt=0,pid=null,retry=500;
        const marks=[];window.gongMarks=marks;
        const now=()=>Date.now()+offset;
        function fmt(s){s=Math.max(0,Math.round(s));const h=Math.floor(s/3600),m=Math.floor(s%3600/60),x=s%60;return (h?h+":"+String(m).padStart(2,"0"):m)+":"+String(x).padStart(2,"0")}
        function signedMs(ms){const t=ms.toFixed(1);return (t==="-0.0"?"+0.0":(ms>=0?"+":"")+t)+" ms"}
        function away(ms){const s=Math.round(ms/1000);return s<60?s+" s":s<3600?Math.round(s/60)+" min":(s/3600).toFixed(1)+" h"}
        async function api(method,path,body){
          const r=await fetch(path,{method,headers:body?{"Content-Type":"application/json"}:{},body:body?JSON.stringify(body):undefined,credentials:"same-origin"});
          const j=await r.json().catch(()=>({}));
          if(r.status===401){showPair();throw new Error("unpaired")}
          if(!r.ok){const m=(j.error&&j.error.message)||("error "+r.status);note(m);throw new Error(m)}
          return j;
        }
        function note(t){const n=$("note");n.textContent=t;n.style.display="block";clearTimeout(note.t);note.t=setTimeout(()=>n.style.display="none",4000)}
        function showPair(){$("pair").hidden=false;$("app").hidden=true}
        // The QR code gong remote pair draws carries the code after '#': filled in, then dropped
        // from the address bar (no request ever carried it).
        {const c=/^#code=(\d{8})$/.exec(location.hash);if(c){$("code").value=c[1];history.replaceState(null,"",location.pathname+location.search)}}
        $("pairBtn").onclick=async()=>{
          try{await api("POST","/api/pair",{code:$("code").value,name:$("devname").value});location.reload()}
          catch(e){$("pairMsg").textContent="Not paired: "+($("note").textContent||e.message)}
        };
        $("nightBtn").onclick=()=>{const on=document.body.classList.toggle("night");$("nightBtn").setAttribute("aria-pressed",on);localStorage.night=on?"1":""};
        if(localStorage.night)document.body.classList.add("night");

        function renderSit(){
          const run=!!status;$("sitNone").hidden=run;$("sitRun").hidden=!run;if(!run)return;
          const s=status,dt=s.state==="active"?(now()-statusAt)/1000:0;
          $("sitTitle").textContent=s.pattern+(s.cycles>1?" · cycle "+s.cycle+"/"+s.cycles:"");
          $("phase").textContent=s.phase;
          $("phaseLeft").textContent=fmt(s.phaseSeconds-s.phaseElapsedSeconds-dt);
          $("totalLeft").textContent=s.open?"open":fmt(s.plannedSeconds-s.elapsedSeconds-dt);
          // The session takes no pause, resume or skip while its end rings out (nor a stop: it is
          // stopping), and only a stop while it waits for its device: none is offered then.
          const out=s.state==="completing",waiting=s.state==="failed";
          $("state").textContent=out?"ringing out":waiting?"waiting for the device":s.state;
          $("toggleBtn").textContent=out?"Ringing out…":waiting?"Waiting for the device…":s.state==="paused"?"Resume":"Pause";
          $("toggleBtn").disabled=out||waiting;$("skipBtn").disabled=out||waiting;$("stopBtn").disabled=out;
          if(lastChange){const w={pause:"Paused",resume:"Resumed",skip:"Phase skipped",stop:"Stopped",gain:"Gain set",start:"Started",
            toggle:s.state==="paused"?"Paused":"Resumed"};$("sitBy").textContent=(w[lastChange.action]||lastChange.action)+" by "+lastChange.by}
          if(document.activeElement!==$("gain")){$("gain").value=s.gainDB;$("gainV").textContent=s.gainDB+" dB"}
        }
        const keys=["every","at","random","active","days","quiet","max"];let shownSched="";
        function renderBells(){
          $("bellsNone").hidden=!!bells;$("bellsRun").hidden=!bells;if(!bells)return;
          // A pause that reaches past the next bell (the bells say so, to the second): it will not
          // ring, so it is not counted down.
          const held=!!bells.nextPaused;
          $("nextLabel").textContent=!held&&bells.nextDue?"Next bell in":"Next bell";$("nextLeft").textContent=held?"paused":bells.nextDue?fmt(bells.nextDue-now()/1000):"none";
          $("nextAt").textContent=bells.next?(held?"not at ":"at ")+bells.next.slice(11)+(bells.passingOver?" (to be passed over)":""):"";
          // Filled when the box's schedule changes, so a field being edited is left alone.
          const sc=JSON.stringify(bells.schedule||null);if(bells.schedule&&sc!==shownSched){shownSched=sc;for(const k of keys)$("s_"+k).value=bells.schedule[k]||""}
          $("bellsPaused").textContent=bells.pausedUntil?(bells.pausedUntil==="resume"?"Paused until resumed":"Paused until "+bells.pausedUntil.slice(11))+(bells.by?" (by "+bells.by+")":""):"";
        }
        async function loadPlan(){
          try{const p=(await api("GET","/api/bells/plan")).bells;if(!p)return;
            // Past bells the history has no word of (gong bells was not running) make one line.
            const rows=[];for(const b of p.plan){const last=rows[rows.length-1];
              if(b.outcome==="unrecorded"&&last&&last.outcome==="unrecorded"){last.until=b.time;last.count++}else rows.push(Object.assign({count:1},b))}
            $("plan").replaceChildren(...rows.map(b=>{const li=document.createElement("li");
              li.innerHTML="<span></span><span></span>";li.children[0].textContent=b.time+(b.until?"–"+b.until:"");
              if(b.outcome==="unrecorded"){li.className="mute";li.children[1].textContent="no record"}
              else li.children[1].textContent=b.outcome+(b.reason?" ("+b.reason+")":"")+(b.offMs!=null?" "+signedMs(b.offMs):"");return li}))}catch(e){}
        }
        async function loadHistory(){
          try{const h=await api("GET","/api/history");
            const n=h.total?h.total.sessions:0,inDays=d=>d+(d===1?" day":" days");
            let t=n+(n===1?" session, ":" sessions, ")+Math.round(h.total?h.total.minutes:0)+" min";
            if(h.currentStreak!=null)t+=" · streak "+inDays(h.currentStreak)+" (longest "+inDays(h.longestStreak)+")";
            $("hist").textContent=t;
            const days=(h.days||[]).slice(-28),top=Math.max(1,...days.map(d=>d.minutes));
            $("cal").replaceChildren(...days.map(d=>{const i=document.createElement("i");i.title=d.date+": "+Math.round(d.minutes)+" min";
              if(d.minutes>0)i.style.background="color-mix(in srgb,var(--accent) "+Math.round(25+75*d.minutes/top)+"%,transparent)";return i}))}catch(e){}
        }
        async function refresh(){
          const d=await api("GET","/api/device");
          $("pair").hidden=true;$("app").hidden=false;
          const s=await api("GET","/api/session");const first=s.sessions[0];
          status=first?first.status:null;pid=first?first.pid:null;statusAt=now();
          const b=await api("GET","/api/bells");bells=b.bells;bellsAt=now();
          renderSit();renderBells();loadPlan();loadHistory();
        }
        // Each cue is flashed when the room hears it. A session announces a cue ahead (cueAhead:
        // when it will be heard, on the box's clock), so the flash is set for then, moved if it is
        // announced again and dropped if the session withdraws it (a pause, skip, stop or loss):
        // a cue that never sounds is never marked. The cue's own event, which may come after its
        // sound, marks it only if nothing did, and records when it was really heard.
        const cues=new Map();
        function flash(){const c=$("cue");c.classList.add("on");setTimeout(()=>c.classList.remove("on"),document.body.classList.contains("night")?150:400)}
        function planMark(key,at,got,sound,announced){
          const old=cues.get(key);if(old&&old.mark)return old;if(old)clearTimeout(old.timer);
          const c={at,got,announced:announced||!!(old&&old.announced)};
          c.timer=setTimeout(()=>{c.mark={key,sound,audibleMs:c.at,markedMs:Date.now(),receivedMs:c.got,announced:c.announced,
            heardMs:c.heard?c.heard.at:null,eventMs:c.heard?c.heard.got:null,lateFrames:c.heard?c.heard.late:null};marks.push(c.mark);flash()},Math.max(0,at-got));
          cues.set(key,c);
          for(const [k,o] of cues)if(o.mark&&o.at<got-60000)cues.delete(k);
          return c;
        }
        function cueAhead(p,ev,wm){if(ev.audible!=null)planMark(p+":"+ev.frame,ev.audible*1000+wm-offset,Date.now(),ev.sound,true)}
        function cueHeard(p,ev,wm){
          if(ev.audible==null)return;
          const at=ev.audible*1000+wm-offset,got=Date.now(),key=p+":"+(ev.frame-ev.lateFrames),c=cues.get(key);
          if(c&&c.mark){c.mark.heardMs=at;c.mark.eventMs=got;c.mark.lateFrames=ev.lateFrames}else planMark(key,at,got,ev.sound,false).heard={at,got,late:ev.lateFrames};
        }
        function withdraw(p){for(const [k,c] of cues)if(!c.mark&&(p==null||k.startsWith(p+":"))){clearTimeout(c.timer);cues.delete(k)}}
        function connect(){
          ws=new WebSocket((location.protocol==="https:"?"wss://":"ws://")+location.host+"/ws");
          ws.onopen=()=>{
            $("banner").style.display="none";retry=500;
            if(lostAt){note("Back after "+away(Date.now()-lostAt)+" away");lostAt=null}
            bestRtt=1e9;for(let i=0;i<5;i++)setTimeout(()=>ws.readyState===1&&ws.send(JSON.stringify({type:"time",clientMs:Date.now()})),i*200);
            refresh().catch(()=>{});
          };
          ws.onmessage=e=>{
            const m=JSON.parse(e.data);
            if(m.type==="time"){const t=Date.now(),rtt=t-m.clientMs;if(rtt<bestRtt){bestRtt=rtt;offset=m.serverMs-(m.clientMs+t)/2;
              $("clock").textContent="Clock offset to the box "+signedMs(offset)+" (round trip "+rtt+" ms)";window.gongOffset=offset}}
            else if(m.type==="session"){status=m.status;pid=m.pid;statusAt=m.serverMs;renderSit()}
            else if(m.type==="ended"){withdraw(m.pid);if(m.pid===pid){status=null;pid=null;renderSit()}}
            else if(m.type==="history")loadHistory();
            else if(m.type==="event"){const e=m.event,w=m.wallMinusMonotonicMs;
              if(e.type==="cue")cueHeard(m.pid,e,w);else if(e.type==="cueAhead")cueAhead(m.pid,e,w);else if(e.type==="cuesWithdrawn")withdraw(m.pid)}
            else if(m.type==="change"){
              if(m.action==="history.add")note(m.by+" added a sit");
              else if(m.action.startsWith("bells.")){if(m.bells){bells=m.bells;bells.by=m.by;renderBells();loadPlan()}note(m.by+": bells "+m.action.slice(6))}
              else{lastChange=m;renderSit()}
            }
            else if(m.type==="bells"){if(m.event===null){bells=null;renderBells()}else if(m.event.type==="bellsChanged"){bells=Object.assign(bells||{},m.event);renderBells()}else{loadPlan();api("GET","/api/bells").then(b=>{bells=b.bells;renderBells()}).catch(()=>{})}}
          };
          ws.onclose=e=>{
            withdraw(null);  // what was said while away is not known: no mark on an old word
            if(e.code===1008){showPair();return}
            if(!lostAt)lostAt=Date.now();
            $("banner").style.display="block";$("note").style.display="none";
            setTimeout(connect,retry);retry=Math.min(retry*2,10000);
          };
        }
        const post=(p,b)=>api("POST",p,b).catch(()=>{});
        const q=()=>pid?"?pid="+pid:"";
        $("toggleBtn").onclick=()=>post("/api/session/toggle"+q());
        $("skipBtn").onclick=()=>post("/api/session/skip"+q());
        $("stopBtn").onclick=()=>{if(confirm("Stop the sit?"))post("/api/session/stop"+q())};
        $("gain").onchange=e=>post("/api/session/gain"+q(),{decibels:+e.target.value});
        $("gain").oninput=e=>$("gainV").textContent=e.target.value+" dB";
        $("startBtn").onclick=()=>{const l=$("length").value.trim(),b={pattern:$("pattern").value};
          if(l==="open")b.open=true;else if(l)b.duration=l;if($("delay").value.trim())b.delay=$("delay").value.trim();if($("device").value.trim())b.device=$("device").value.trim();post("/api/session/start",b)};
        $("b1h").onclick=()=>post("/api/bells/pause",{seconds:3600});
        $("bToday").onclick=()=>post("/api/bells/pause",{today:true});
        $("bResume").onclick=()=>post("/api/bells/resume");
        $("bRing").onclick=()=>post("/api/bells/ring");
        $("bNext").onclick=()=>post("/api/bells/next");
        // The box checks what is sent, by the rules gong bells and config.toml are read by, and
        // its one line says what is wrong.
        async function send(path,body,msg,done,refused=s=>s){const m=$(msg);m.textContent="";try{const j=await api("POST",path,body);m.className="mute";m.textContent=done(j);return true}catch(e){m.className="err";m.textContent=refused(e.message);return false}}
        $("schedBtn").onclick=()=>{const b={};for(const k of keys){const v=$("s_"+k).value.trim();if(v)b[k]=v}send("/api/bells/schedule",b,"schedMsg",j=>"The bells ring by it now"+(j.bells.savedTo?", and config.toml keeps it":"; not kept in config.toml: "+j.bells.notSaved)+(j.bells.flagsWin?" (gong bells' own "+j.bells.flagsWin+" wins when it starts again)":"")+".")};
        // gong history add's refusal names its flag; the page names the field the value was typed in.
        const byField=s=>s.replace(/^--(pattern|at|length) (.*?): /,(_,f,v)=>({pattern:"What",at:"Day and time",length:"Length"})[f]+' "'+v+'": ');
        $("a_day").value=new Date(Date.now()-new Date().getTimezoneOffset()*6e4).toISOString().slice(0,10);
        $("addBtn").onclick=async()=>{if(await send("/api/history/add",{pattern:$("a_pattern").value.trim(),at:$("a_day").value+" "+$("a_time").value,length:$("a_length").value.trim()},"addMsg",j=>j.said[0].toUpperCase()+j.said.slice(1)+".",byField))$("a_length").value=""};
        setInterval(()=>{if(!document.hidden){renderSit();renderBells()}},250);
        document.addEventListener("visibilitychange",()=>{if(!document.hidden&&ws&&ws.readyState>1)connect()});
        fetch("/api/device",{credentials:"same-origin"}).then(r=>{if(r.status===401)showPair();else connect()}).catch(()=>{$("banner").style.display="block";setTimeout(()=>location.reload(),3000)});
        </script>
        </body>
        </html>
        """#
}
