// The Lesson's keys (see keys.py): the right arrow or Page Down (a presenter's clicker) = Next, the left arrow or
// Page Up = Previous. A components.v2 component: Streamlit mounts it in the page's own document (no iframe), so its
// listener hears the page's keys; it is added when the component is mounted and removed when it is unmounted (the
// cleanup this module returns), so no other page keeps it.
//
// - A key clicks the enabled button named for it (found by the class Streamlit gives a keyed element,
//   .st-key-<key>), so keys and buttons do the same thing; a disabled button (Next at the last step) does nothing.
// - Keys typed into a field that takes them (text, numbers, a select box, a slider) are the field's; a switch, a
//   check box or a button focused by a click (the Present switch) takes no arrows, so the keys still move the
//   lesson. With Ctrl, Alt, Shift or Meta a key is the browser's.
const CLICKABLE_INPUTS = ["checkbox", "radio", "button", "submit", "reset", "image", "color", "file"];
const FIELD_ROLES = ["slider", "textbox", "combobox", "spinbutton", "listbox", "searchbox"];

let keys = {};  // {key: the button's key}, the component's data (the latest mounted)
let mounts = 0;  // components mounted now (a remount may mount the new one before it unmounts the old one)
let removeListener = null;  // set while the listener is on the page

const takesKeys = (t) => {
  if (!t || !t.tagName) return false;
  if (t.isContentEditable || t.tagName === "TEXTAREA" || t.tagName === "SELECT") return true;
  if (t.tagName === "INPUT") return !CLICKABLE_INPUTS.includes((t.type || "text").toLowerCase());
  return FIELD_ROLES.includes(t.getAttribute && t.getAttribute("role"));
};

const onKeyDown = (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || e.shiftKey || takesKeys(e.target)) return;
  const name = keys[e.key];
  const button = name && document.querySelector(".st-key-" + name + " button");
  if (!button || button.disabled) return;
  e.preventDefault();
  button.click();
};

function listen() {
  const options = {capture: true};
  document.addEventListener("keydown", onKeyDown, options);
  window.pcrpLessonKeys = true;  // (the browser tests wait for it)
  return () => {
    document.removeEventListener("keydown", onKeyDown, options);
    window.pcrpLessonKeys = false;
  };
}

export default function (component) {
  const {data, parentElement} = component;
  if (data && data.keys) keys = data.keys;
  // Called again at a redraw of the same component: nothing changes, and Streamlit keeps the cleanup it returns
  // (the last one returned runs when the component is unmounted).
  if (parentElement.pcrpCleanup) return parentElement.pcrpCleanup;
  mounts += 1;
  if (!removeListener) removeListener = listen();
  parentElement.pcrpCleanup = () => {  // unmounted: once no component is, the page no longer has these keys
    parentElement.pcrpCleanup = null;
    mounts -= 1;
    if (mounts === 0 && removeListener) { removeListener(); removeListener = null; }
  };
  return parentElement.pcrpCleanup;
}
