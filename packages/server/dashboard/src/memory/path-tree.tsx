import { useEffect, useState } from 'preact/hooks';
import { hrefFor } from '../router.ts';
import type { TreeNode } from './tree.ts';

interface Props {
  root: TreeNode;
  selected: string;
  /** Unseen live arrivals at or below a path. */
  unseen(path: string): number;
}

const ancestors = (path: string): string[] => {
  const parts = path.split('/');
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
};


/** Entity paths as a collapsible tree; each path is a link, so it is keyboard- and URL-friendly. */
export const PathTree = ({ root, selected, unseen }: Props) => {
  // Paths the user toggled away from their default: open for the first two levels (paths
  // are usually source/owner/thing) and along the selected path, closed deeper.
  const [flipped, setFlipped] = useState<Set<string>>(new Set());
  const onSelectedPath = new Set(selected ? ancestors(selected) : []);
  useEffect(() => setFlipped((f) => new Set([...f].filter((p) => !onSelectedPath.has(p)))), [selected]);
  const isOpenPath = (path: string) => (path.split('/').length < 3 || onSelectedPath.has(path)) !== flipped.has(path);
  const toggle = (path: string) =>
    setFlipped((f) => {
      const next = new Set(f);
      if (next.has(path)) next.delete(path);
      else next.add(path);
      return next;
    });

  const render = (node: TreeNode) => {
    const isOpen = isOpenPath(node.path);
    const fresh = unseen(node.path);
    return (
      <li key={node.path}>
        <div class={`tree-row ${node.path === selected ? 'selected' : ''}`}>
          {node.children.length > 0 ? (
            <button type="button" class="twisty" aria-expanded={isOpen} aria-label={`${isOpen ? 'Collapse' : 'Expand'} ${node.path}`} onClick={() => toggle(node.path)}>
              {isOpen ? '▾' : '▸'}
            </button>
          ) : (
            <span class="twisty" aria-hidden="true" />
          )}
          <a href={hrefFor('memory', { path: node.path })} aria-current={node.path === selected ? 'true' : undefined} data-path={node.path}>
            {node.name}
          </a>
          {fresh > 0 && <span class="fresh-dot" title={`${fresh} new since you opened the dashboard`} aria-label={`${fresh} new`} />}
          <span class="count">{node.total}</span>
        </div>
        {isOpen && node.children.length > 0 && <ul>{node.children.map(render)}</ul>}
      </li>
    );
  };

  return (
    <nav class="tree" aria-label="Entity paths">
      <div class={`tree-row ${selected === '' ? 'selected' : ''}`}>
        <span class="twisty" aria-hidden="true" />
        <a href={hrefFor('memory')} aria-current={selected === '' ? 'true' : undefined}>
          All paths
        </a>
        <span class="count">{root.total}</span>
      </div>
      <ul>{root.children.map(render)}</ul>
    </nav>
  );
};
