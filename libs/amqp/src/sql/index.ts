export * from './read-bookmark.sql.js';
export * from './save-bookmark.sql.js';
