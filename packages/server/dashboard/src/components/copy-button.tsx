import { useState } from 'preact/hooks';

// The Clipboard API exists only in secure contexts (https, localhost); a dashboard opened
// over plain http on another host falls back to the older copy command.
const copyText = async (text: string): Promise<void> => {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  if (!ok) throw new Error('copy refused');
};

export const CopyButton = ({ text, label }: { text: string; label: string }) => {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = () =>
    copyText(text).then(
      () => setState('copied'),
      () => setState('failed'),
    ).finally(() => setTimeout(() => setState('idle'), 2000));
  return (
    <button type="button" class="button small copy" onClick={copy} aria-label={label} title={label}>
      {state === 'copied' ? 'Copied ✓' : state === 'failed' ? 'Select and copy' : 'Copy'}
    </button>
  );
};
