// Keyboard shortcuts of the Explorer (see keys.py): Space = pause / resume (or start), Right arrow or Page Down (a
// presenter's clicker) = one sweep, R = reset. Added once to the page itself by keys.py.
//
// - A key clicks the enabled button, so keys and buttons do the same thing.
// - Keys typed into a text field or a select are theirs, and so are those of a control reached with the keyboard
//   (Tab): Space flips the Present toggle, arrows move the pace slider. A control focused by a click or a tap (the
//   Present toggle, the pace slider, a tab) keeps no key: after clicking Present, the arrow and Page Down still step
//   the run. (How the control got its focus is recorded at the focus, from the last input before it: :focus-visible
//   cannot tell, as the browser turns it on at the first key pressed.)
// - A press whose button is being redrawn (a busy server) is tried again for up to a second, not lost.
// - No key throws a run away at one press: Space on a finished or stopped run (which would start a new one) and R
//   (reset) first say what a second press of the same key within CONFIRM_MS does, at the top of the page; any other
//   key, or the time running out, cancels.
(() => {
  const doc = document;
  const CONFIRM_MS = 4000;
  let armed = null;  // {key, until}: the key whose second press is awaited

  const enabled = (key) => {
    const b = doc.querySelector('.st-key-' + key + ' button');
    return b && !b.disabled ? b : null;
  };
  const CONTROL_ROLES = ['slider', 'switch', 'checkbox', 'radio', 'tab', 'option', 'combobox', 'listbox', 'spinbutton'];
  const CLICKABLE_INPUTS = ['checkbox', 'radio', 'button', 'submit', 'reset', 'range'];
  const owns = (t) => {
    if (!t || !t.tagName) return false;
    if (t.isContentEditable || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT') return true;
    if (t.tagName === 'INPUT' && !CLICKABLE_INPUTS.includes((t.type || '').toLowerCase())) return true;
    const control = t.tagName === 'INPUT' || CONTROL_ROLES.includes(t.getAttribute && t.getAttribute('role'));
    return Boolean(control && !t.pcrpFocusByPointer);
  };
  // The last input before a focus says how it came: a pointer (click, tap) or a key (Tab). Not a time window: a
  // busy page can take over a second between a click and the focus it gives.
  let lastInput = 'key';
  doc.addEventListener('pointerdown', () => { lastInput = 'pointer'; }, true);
  doc.addEventListener('keydown', () => { lastInput = 'key'; }, true);
  doc.addEventListener('focusin', (e) => {
    if (e.target) e.target.pcrpFocusByPointer = lastInput === 'pointer';
  }, true);

  // A line at the top of the page (inert text), for CONFIRM_MS: where a class looking at the charts sees it.
  const notice = (text) => {
    let box = doc.getElementById('pcrp-key-notice');
    if (!box) {
      box = doc.createElement('div');
      box.id = 'pcrp-key-notice';
      box.setAttribute('role', 'status');
      box.setAttribute('aria-live', 'assertive');
      box.style.cssText = 'position:fixed;top:10px;left:50%;transform:translateX(-50%);z-index:1000000;' +
        'max-width:90vw;padding:0.5rem 1.1rem;border-radius:0.5rem;background:#fff3cd;color:#31333f;' +
        'border:2px solid #d39e00;box-shadow:0 4px 14px rgba(0,0,0,0.25);font:20px "Source Sans",sans-serif;';
      doc.body.appendChild(box);
    }
    box.textContent = text;
    box.hidden = false;
    clearTimeout(box.pcrpTimer);
    box.pcrpTimer = setTimeout(() => { box.hidden = true; }, CONFIRM_MS);
  };
  const disarm = () => {
    if (!armed) return;
    armed = null;
    const box = doc.getElementById('pcrp-key-notice');
    if (box) { clearTimeout(box.pcrpTimer); box.hidden = true; }
  };

  // What a key does now: the button it clicks, and what to say before a first press throws a run away (or null).
  const action = (key) => {
    if (key === 'Space') {
      const toggle = enabled('pause') || enabled('resume');
      if (toggle) return {button: toggle, ask: null};
      const start = enabled('start');
      if (!start) return null;
      return {button: start, ask: enabled('reset') ? 'Press Space again to start a new run: the one shown now will ' +
                                                     'be cleared. Any other key keeps it.' : null};
    }
    if (key === 'R') {
      const reset = enabled('reset');
      if (!reset) return null;
      const live = enabled('pause') || enabled('resume');
      return {button: reset, ask: 'Press R again to clear this run' + (live ? ' (its chains stop)' : '') +
                                  '. Any other key keeps it.'};
    }
    const step = enabled('step');
    return step ? {button: step, ask: null} : null;
  };

  // A key whose button is missing or disabled at the press (the page redrawing it) is tried again every 100 ms
  // for RETRY_MS; one that asks for a second press is not (its question would come late).
  const RETRY_MS = 1000;
  let retrying = null;
  const retry = (key, until) => {
    clearTimeout(retrying);
    retrying = setTimeout(() => {
      const act = action(key);
      if (act && !act.ask) act.button.click();
      else if (!act && performance.now() < until) retry(key, until);
    }, 100);
  };

  doc.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || owns(e.target)) return;
    const key = e.code === 'Space' ? 'Space' : (e.key === 'r' || e.key === 'R') ? 'R'
      : (e.key === 'ArrowRight' || e.key === 'PageDown') ? 'Step' : null;
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
    if (doc.activeElement && doc.activeElement !== doc.body) doc.activeElement.blur();
  }, true);
  doc.addEventListener('keyup', (e) => {  // (a focused button or toggle would act on Space's keyup)
    if (e.code === 'Space' && !owns(e.target)) { e.preventDefault(); e.stopPropagation(); }
  }, true);
})();
