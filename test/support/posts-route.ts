/**
 * The mapped route many integration tests share, as a line of a `routes:` list: GET /posts on
 * one backend, each item's `authorId` looked up on a users service and added as its `author`.
 */

/** Something a route can name as its `service`: a local backend. */
export interface Service {
  /** `127.0.0.1:PORT` */
  readonly host: string;
}

/**
 * `GET /posts` on `posts`, mapping `/users/{authorId}` on `users` to the tag `author`.
 * @example await startGateway(`routes:\n${postsWithAuthors(posts, users)}\n`);
 */
export function postsWithAuthors(posts: Service, users: Service): string {
  return `  - { method: GET, route: /posts, service: ${posts.host}, path: /posts,
      mapping: [{ path: "/users/{authorId}", service: ${users.host}, tag: author }] }`;
}
