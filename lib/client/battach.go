package client

import (
	"context"

	"xce/lib/api/rpc"
)

// Battach runs a command in a running job's container (battach).
func (c *Client) Battach(ctx context.Context, in *rpc.BattachRequest) (*rpc.BattachReply, error) {
	return unary[rpc.BattachReply](ctx, c, "Battach", in)
}
