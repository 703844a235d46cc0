// Keyboard shortcuts of the Explorer (see keys.py): Space = pause / resume (or start), Right arrow or Page Down (a
// presenter's clicker) = one sweep, R = reset. A components.v2 component: Streamlit mounts it in the page's own
// document (no iframe), so its listener hears the page's keys; it is added when the component is mounted and removed
// when it is unmounted (the cleanup this module returns), so no other page keeps it. The module is loaded once per
// page, so what it remembers between a remount (a second press awaited, how a control got its focus) survives one.
//
// - A key clicks the enabled button (found by the class Streamlit gives a keyed element, .st-key-<key>), so keys and
//   buttons do the same thing.
// - Keys typed into a text field or a select are theirs, and so are those of a control reached with the keyboard
//   (Tab): Space flips the Present toggle, arrows move the pace slider. A control focused by a click or a tap (the
//   Present toggle, the pace slider, a tab) keeps no key: after clicking Present, the arrow and Page Down still step
//   the run. (How the control got its focus is recorded at the focus, from the last input before it: :focus-visible
//   cannot tell, as the browser turns it on at the first key pressed.)
// - A press whose button is being redrawn (a busy server) is tried again for up to a second, not lost.
// - No key throws a run away at one press: Space on a finished or stopped run (which would start a new one) and R
//   (reset) first say what a second press of the same key within CONFIRM_MS does, at the top of the page (the
//   component's own notice); any other key, or the time running out, cancels.
const CONFIRM_MS = 4000;
const RETRY_MS = 1000;
const CONTROL_ROLES = ["slider", "switch", "checkbox", "radio", "tab", "option", "combobox", "listbox", "spinbutton"];
const CLICKABLE_INPUTS = ["checkbox", "radio", "button", "submit", "reset", "range"];

let armed = null;  // {key, until}: the key whose second press is awaited
let lastInput = "key";  // the last input before a focus: a pointer (click, tap) or a key (Tab)
let retrying = null;
let noticeBox = null;  // the notice of the component mounted last
let mounts = 0;  // components mounted now (a remount may mount the new one before it unmounts the old one)
let removeListeners = null;  // set while the listeners are on the page

const enabled = (key) => {
  const b = document.querySelector(".st-key-" + key + " button");
  return b && !b.disabled ? b : null;
};

const owns = (t) => {
  if (!t || !t.tagName) return false;
  if (t.isContentEditable || t.tagName === "TEXTAREA" || t.tagName === "SELECT") return true;
  if (t.tagName === "INPUT" && !CLICKABLE_INPUTS.includes((t.type || "").toLowerCase())) return true;
  const control = t.tagName === "INPUT" || CONTROL_ROLES.includes(t.getAttribute && t.getAttribute("role"));
  return Boolean(control && !t.pcrpFocusByPointer);
};

// The notice at the top of the page (inert text), for CONFIRM_MS: where a class looking at the charts sees it.
const notice = (text) => {
  if (!noticeBox) return;
  noticeBox.textContent = text;
  noticeBox.hidden = false;
  clearTimeout(noticeBox.pcrpTimer);
  noticeBox.pcrpTimer = setTimeout(() => { noticeBox.hidden = true; }, CONFIRM_MS);
};
const disarm = () => {
  if (!armed) return;
  armed = null;
  if (noticeBox) { clearTimeout(noticeBox.pcrpTimer); noticeBox.hidden = true; }
};

// What a key does now: the button it clicks, and what to say before a first press throws a run away (or null).
const action = (key) => {
  if (key === "Space") {
    const toggle = enabled("pause") || enabled("resume");
    if (toggle) return {button: toggle, ask: null};
    const start = enabled("start");
    if (!start) return null;
    return {button: start, ask: enabled("reset") ? "Press Space again to start a new run: the one shown now will " +
                                                   "be cleared. Any other key keeps it." : null};
  }
  if (key === "R") {
    const reset = enabled("reset");
    if (!reset) return null;
    const live = enabled("pause") || enabled("resume");
    return {button: reset, ask: "Press R again to clear this run" + (live ? " (its chains stop)" : "") +
                                ". Any other key keeps it."};
  }
  const step = enabled("step");
  return step ? {button: step, ask: null} : null;
};

// A key whose button is missing or disabled at the press (the page redrawing it) is tried again every 100 ms for
// RETRY_MS; one that asks for a second press is not (its question would come late).
const retry = (key, until) => {
  clearTimeout(retrying);
  retrying = setTimeout(() => {
    const act = action(key);
    if (act && !act.ask) act.button.click();
    else if (!act && performance.now() < until) retry(key, until);
  }, 100);
};

const onPointer = () => { lastInput = "pointer"; };
const onFocus = (e) => { if (e.target) e.target.pcrpFocusByPointer = lastInput === "pointer"; };
const onKeyDown = (e) => {
  lastInput = "key";
  if (e.ctrlKey || e.metaKey || e.altKey || owns(e.target)) return;
  const key = e.code === "Space" ? "Space" : (e.key === "r" || e.key === "R") ? "R"
    : (e.key === "ArrowRight" || e.key === "PageDown") ? "Step" : null;
  if (armed && (key !== armed.key || performance.now() > armed.until)) disarm();
  if (!key) return;
  clearTimeout(retrying);  // a later key replaces an earlier one still being tried
  const act = action(key);
  if (!act) {
    // The page may be redrawing its buttons (a busy server): try again for a moment rather than lose the press.
    if (!e.repeat) retry(key, performance.now() + RETRY_MS);
    return;
  }
  e.preventDefault(); e.stopPropagation();
  if (e.repeat) return;
  if (act.ask && !armed) {
    armed = {key, until: performance.now() + CONFIRM_MS};
    notice(act.ask);
    return;
  }
  disarm();
  act.button.click();
  if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
};
const onKeyUp = (e) => {  // (a focused button or toggle would act on Space's keyup)
  if (e.code === "Space" && !owns(e.target)) { e.preventDefault(); e.stopPropagation(); }
};

function listen() {
  const options = {capture: true};
  document.addEventListener("pointerdown", onPointer, options);
  document.addEventListener("focusin", onFocus, options);
  document.addEventListener("keydown", onKeyDown, options);
  document.addEventListener("keyup", onKeyUp, options);
  window.pcrpKeys = true;  // (the browser tests wait for it)
  return () => {
    document.removeEventListener("pointerdown", onPointer, options);
    document.removeEventListener("focusin", onFocus, options);
    document.removeEventListener("keydown", onKeyDown, options);
    document.removeEventListener("keyup", onKeyUp, options);
    clearTimeout(retrying);
    window.pcrpKeys = false;
  };
}

export default function (component) {
  const {parentElement} = component;
  let box = parentElement.querySelector("#pcrp-key-notice");
  if (!box) {
    box = document.createElement("div");
    box.id = "pcrp-key-notice";
    box.setAttribute("role", "status");
    box.setAttribute("aria-live", "assertive");
    box.hidden = true;
    parentElement.appendChild(box);
  }
  // Called again at a redraw of the same component: nothing changes, and Streamlit keeps the cleanup it returns
  // (the last one returned runs when the component is unmounted).
  if (box.pcrpCleanup) return box.pcrpCleanup;
  noticeBox = box;
  mounts += 1;
  if (!removeListeners) removeListeners = listen();
  box.pcrpCleanup = () => {  // unmounted: once no component is, the page no longer has these keys
    box.pcrpCleanup = null;
    if (noticeBox === box) noticeBox = null;
    mounts -= 1;
    if (mounts === 0 && removeListeners) { removeListeners(); removeListeners = null; }
  };
  return box.pcrpCleanup;
}
