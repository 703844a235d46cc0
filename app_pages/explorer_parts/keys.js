// Keyboard shortcuts of the Explorer (see keys.py): Space = pause / resume (or start), Right arrow = one sweep,
// R = reset. Added once to the page itself by keys.py.
(() => {
  const doc = document;
  const click = (key) => {
    const b = doc.querySelector('.st-key-' + key + ' button');
    if (b && !b.disabled) { b.click(); return true; }
    return false;
  };
  const typing = (t) => t && (['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName) || t.isContentEditable ||
                              (t.getAttribute && t.getAttribute('role') === 'slider'));
  doc.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    let handled = false;
    if (e.code === 'Space') { handled = true; if (!e.repeat) click('pause') || click('resume') || click('start'); }
    else if (e.key === 'ArrowRight') { handled = click('step'); }
    else if (e.key === 'r' || e.key === 'R') { handled = click('reset'); }
    if (handled) { e.preventDefault(); e.stopPropagation(); if (doc.activeElement) doc.activeElement.blur(); }
  }, true);
  doc.addEventListener('keyup', (e) => {
    if (e.code === 'Space' && !typing(e.target)) { e.preventDefault(); e.stopPropagation(); }
  }, true);
})();
