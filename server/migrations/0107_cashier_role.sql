-- The cashier: chips bought and cashed out at the cage are his alone (separation of duties:
-- directors and admins no longer move money in or out of wallets).
ALTER TABLE users DROP CONSTRAINT users_role_check;
ALTER TABLE users ADD CONSTRAINT users_role_check
    CHECK (role IN ('player', 'croupier', 'chef', 'inspector', 'cashier', 'director', 'admin'));
