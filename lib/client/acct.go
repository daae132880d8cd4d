package client

import (
	"context"
	"errors"
	"io"

	"xce/lib/api"
)

// Accounting runs a bacct request and hands each streamed page of
// accounting records to fn as it comes, so that 100,000 records are never
// held at once. It returns the job ids that named no record.
func (c *Client) Accounting(ctx context.Context, req *api.AcctRequest, fn func([]*api.Job) error) ([]*api.JobRef, error) {
	stream, err := c.accountingStream(ctx, req)
	if err != nil {
		return nil, err
	}
	var notFound []*api.JobRef
	for {
		page := &api.AcctReply{}
		err := stream.RecvMsg(page)
		if errors.Is(err, io.EOF) {
			return notFound, nil
		}
		if err != nil {
			return notFound, err
		}
		notFound = append(notFound, page.NotFound...)
		if err := fn(page.Jobs); err != nil {
			return notFound, err
		}
	}
}
