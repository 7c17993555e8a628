export * from './read-bookmark.sql.js';
export * from './save-bookmark.sql.js';
export * from './set-bookmark.sql.js';
