/** The demo's data: a tiny blog (users, posts, comments) and a small shop (products, categories). */
export const users = [
  { id: 1, name: 'Ada Lovelace', email: 'ada@example.com', role: 'admin' },
  { id: 2, name: 'Alan Turing', email: 'alan@example.com', role: 'editor' },
  { id: 3, name: 'Grace Hopper', email: 'grace@example.com', role: 'reader' },
];

export const posts = [
  { id: 1, title: 'Notes on the Analytical Engine', authorId: 1 },
  { id: 2, title: 'On Computable Numbers', authorId: 2 },
  { id: 3, title: 'The first bug', authorId: 3 },
  { id: 4, title: 'Bernoulli numbers, step by step', authorId: 1 },
];

export const comments = [
  { id: 1, postId: 1, body: 'A classic.' },
  { id: 2, postId: 1, body: 'Still relevant.' },
  { id: 3, postId: 2, body: 'Halting!' },
  { id: 4, postId: 3, body: 'It was a moth.' },
];

export const categories = [
  { id: 'tools', name: 'Tools' },
  { id: 'books', name: 'Books' },
];

export const products = [
  { id: 1, name: 'Slide rule', price: 19.9, categoryId: 'tools' },
  { id: 2, name: 'Difference engine (kit)', price: 499, categoryId: 'tools' },
  { id: 3, name: 'The Art of Computer Programming', price: 189, categoryId: 'books' },
];
