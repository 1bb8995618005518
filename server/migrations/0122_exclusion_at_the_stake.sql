-- A stake from a player under an exclusion in force is refused where its money leaves his
-- wallet (server/play_limits.py), as his login, his requests and his sockets already are. The
-- socket is closed on every process through the broker; a process that never heard it (the
-- broker away from the process that set the exclusion for longer than a frame's patience:
-- docs/operations.md) kept an excluded player's open socket betting. Now it cannot stake.
--
-- "In force", written once here (server/store/users.py calls it): a self-exclusion until the
-- desk lifts it, even past its end; a cool-off until it ends. Inlined by the planner.
CREATE FUNCTION exclusion_in_force(p_kind text, p_until timestamptz)
RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT p_kind = 'self_exclusion' OR p_until > now()
$$;

-- The players of a batch whose stakes are checked before its holds: those with stake or loss
-- limits in the table's currency, and now those under an exclusion in force (in any currency:
-- play_limits decides). A batch holding one goes the checked way (server/runtime.py).
CREATE OR REPLACE FUNCTION players_with_limits(p_users text[], p_currency text)
RETURNS TABLE (user_id text) LANGUAGE sql STABLE AS $$
    SELECT l.user_id FROM play_limits l WHERE l.user_id = ANY(p_users) AND l.currency = p_currency
    UNION
    SELECT e.user_id FROM player_exclusions e
     WHERE e.user_id = ANY(p_users) AND exclusion_in_force(e.kind, e.until)
$$;
