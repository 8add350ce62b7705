/**
 * An entity path with each segment isolated (`<bdi>`): right-to-left segments keep their
 * place in the path. Unisolated, consecutive Hebrew or Arabic segments formed one
 * right-to-left run, drawn last segment first ("services/תשלומים/פרודקשן" for
 * "services/פרודקשן/תשלומים"). The text (and a copy of it) stays the path as written.
 */
export const PathText = ({ path }: { path: string }) => (
  <>
    {path.split('/').map((segment, i) => (
      <>
        {i > 0 && '/'}
        <bdi>{segment}</bdi>
      </>
    ))}
  </>
);
