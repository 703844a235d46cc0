// The live view's one clock, put before live_canvas.js and live_status.js by live_canvas.py: every STEP_MS it runs,
// in one animation frame, every job added since (a job returns true to run again at the next step). The rows'
// canvases and the status line step together, so the browser renders one frame per step (about 12 a second), not
// one per element, and none while nothing plays: a loop asking for every animation frame made the browser render
// 60 frames a second, most of them unchanged, on CPU that the chains of a small server share.
const STEP_MS = 80;

function everyStep(job) {
  const clock = window.pcrpLiveClock || (window.pcrpLiveClock = {jobs: new Set(), due: false});
  clock.jobs.add(job);
  if (clock.due) return;
  clock.due = true;
  const step = () => requestAnimationFrame(() => {
    for (const j of Array.from(clock.jobs)) {
      let again = false;
      try { again = j(); } catch (err) { console.error(err); }  // (a failing job stops, the clock goes on)
      if (!again) clock.jobs.delete(j);
    }
    if (clock.jobs.size) setTimeout(step, STEP_MS);
    else clock.due = false;
  });
  step();
}
