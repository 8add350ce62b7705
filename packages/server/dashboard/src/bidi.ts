import { options } from 'preact';

/**
 * Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069). Inside a
 * key, a path or a value they reorder what follows them on screen: `rtl\u202Egnp.exe` showed
 * as "rtlexe.png". Text needs none of them to display right (the browser orders Hebrew or
 * Arabic itself), so the dashboard shows each as a visible mark instead.
 */
const CONTROL = /[\u202A-\u202E\u2066-\u2069]/;
const CONTROLS = new RegExp(CONTROL.source, 'g');

/** `text` with each bidirectional control shown as `‹U+202E›`. */
export const visibleControls = (text: string): string =>
  text.replace(CONTROLS, (c) => `\u2039U+${(c.codePointAt(0) as number).toString(16).toUpperCase()}\u203A`);

/**
 * Every text node the dashboard renders, and every `title`, passes through visibleControls:
 * one place, whatever component shows stored text. Preact hands its `vnode` hook each text
 * child as a vnode of type null whose props are the text.
 */
export const showBidiControls = (): void => {
  const previous = options.vnode;
  options.vnode = (vnode) => {
    const node = vnode as { type: unknown; props: unknown };
    if (node.type === null && typeof node.props === 'string' && CONTROL.test(node.props)) node.props = visibleControls(node.props);
    else if (node.props !== null && typeof node.props === 'object') {
      const props = node.props as { title?: unknown };
      if (typeof props.title === 'string' && CONTROL.test(props.title)) props.title = visibleControls(props.title);
    }
    previous?.(vnode);
  };
};
