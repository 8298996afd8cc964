/* global document */
// Building the page's DOM: text from the gateway is only ever set as textContent, never as HTML.

/** The page's element with this id. */
export const $ = (id) => document.getElementById(id);

/** An element with attributes and children (strings become text). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === 'class') node.className = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child);
  return node;
}
