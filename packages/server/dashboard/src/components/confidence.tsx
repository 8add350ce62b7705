/** Confidence as a bar and a number; low values are coloured so they stand out. */
export const Confidence = ({ value }: { value: number }) => {
  const level = value >= 0.8 ? 'high' : value >= 0.5 ? 'mid' : 'low';
  return (
    <span class={`confidence ${level}`} title={`confidence ${value}`}>
      <span class="bar" aria-hidden="true">
        <span style={{ width: `${Math.round(value * 100)}%` }} />
      </span>
      {value.toFixed(2)}
    </span>
  );
};
