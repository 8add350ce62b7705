/** Three stacked stones: a cairn. */
export const Logo = () => (
  <svg class="logo" viewBox="0 0 32 32" aria-hidden="true">
    <ellipse cx="16" cy="26" rx="12" ry="4.5" fill="currentColor" opacity="0.55" />
    <ellipse cx="16" cy="17.5" rx="8.5" ry="4" fill="currentColor" opacity="0.8" />
    <ellipse cx="16" cy="9.5" rx="5" ry="3.2" fill="currentColor" />
  </svg>
);
