export interface TreeNode {
  name: string;
  path: string;
  /** Entries at exactly this path. */
  own: number;
  /** Entries at this path and below. */
  total: number;
  children: TreeNode[];
}

/** One collator for every comparison: `localeCompare` sets one up per call, slow on thousands of paths. */
const byName = new Intl.Collator().compare;

/** The entity-path tree of a set of entries, children sorted by name. */
export const buildTree = (paths: Iterable<string>): TreeNode => {
  const root: TreeNode = { name: '', path: '', own: 0, total: 0, children: [] };
  const index = new Map<string, TreeNode>([['', root]]);
  for (const path of paths) {
    let node = root;
    root.total += 1;
    let at = '';
    for (const segment of path.split('/')) {
      at = at ? `${at}/${segment}` : segment;
      let child = index.get(at);
      if (!child) {
        child = { name: segment, path: at, own: 0, total: 0, children: [] };
        index.set(at, child);
        node.children.push(child);
      }
      child.total += 1;
      node = child;
    }
    node.own += 1;
  }
  const sort = (node: TreeNode): void => {
    node.children.sort((a, b) => byName(a.name, b.name));
    node.children.forEach(sort);
  };
  sort(root);
  return root;
};

export const findNode = (root: TreeNode, path: string): TreeNode | null => {
  if (!path) return root;
  let node: TreeNode | undefined = root;
  for (const segment of path.split('/')) {
    node = node?.children.find((c) => c.name === segment);
    if (!node) return null;
  }
  return node;
};
