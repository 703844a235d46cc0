// The live run's status line ("CRP running: 1,234 / 2,000 sweeps · pCRP running: ..."), page text in the page's own
// DOM (read by screen readers and tests like any paragraph). Each frame of the server gives every prior's sweeps done;
// while a prior runs, its count goes up from the one shown to the new one over the frame's playback time, in step
// with the rows' canvases playing back the same sweeps (live_canvas.js), so the line changes with every drawn frame.
// Paused, stopped or finished: the count shown at once. The line is rewritten at each step of the page's live clock
// (live_clock.js), with the canvases. Text only (textContent): inert.

function fmt(n) {
  return Math.round(n).toLocaleString("en");
}

function render(box) {
  const S = box.pcrpStatus;
  const progress = Math.min(1, (performance.now() - S.t0) / S.ms);
  S.shown = S.groups.map((g, i) => (g.state === "running" ? Math.floor(S.from[i] + (g.done - S.from[i]) * progress)
                                                          : g.done));
  const key = S.shown.join(",") + "|" + S.text;
  if (key !== box.pcrpDrawn) {
    box.pcrpDrawn = key;
    const parts = [];
    S.groups.forEach((g, i) => {
      if (i) parts.push(" · ");
      const name = document.createElement("strong");
      name.textContent = g.group;
      parts.push(name, ` ${g.state}: ${fmt(S.shown[i])} / ${fmt(g.total)} sweeps${g.rest}`);
    });
    if (S.note) {  // how the run shares the server, after the counts
      const note = document.createElement("span");
      note.className = "pcrp-share";
      note.textContent = ` · ${S.note}`;
      parts.push(note);
    }
    box.replaceChildren(...parts);
  }
  return progress < 1;
}

export default function (component) {
  const {parentElement} = component;
  const data = Array.isArray(component.data) ? component.data[0] : component.data;  // (a list of one: live_canvas.py)
  if (!data) return;
  let box = parentElement.querySelector("p.pcrp-live-status");
  if (!box) {
    box = document.createElement("p");
    box.className = "pcrp-live-status";
    parentElement.appendChild(box);
  }
  const old = box.pcrpStatus;
  const text = JSON.stringify([data.groups.map(g => [g.group, g.state, g.total, g.rest]), data.note || ""]);
  // from where each count goes up: the count shown now, unless it is of another run or ahead of the new one
  const same = i => old && old.run === data.run && old.groups[i] && old.groups[i].group === data.groups[i].group;
  const from = data.groups.map((g, i) => (same(i) && old.shown[i] <= g.done ? old.shown[i] : g.done));
  box.pcrpStatus = {run: data.run, groups: data.groups, note: data.note || "", from, shown: from.slice(), text,
                    t0: performance.now(), ms: Math.max(1, data.playback_ms)};
  if (render(box)) {
    box.pcrpStep = box.pcrpStep || (() => render(box));
    everyStep(box.pcrpStep);
  }
}
