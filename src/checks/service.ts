/** The checks area's public face: who holds a listing, for listings and the background tasks. */
export { notifyListingsDue, releaseStaleLeases } from './listing-leases.js';
