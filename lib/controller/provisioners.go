package controller

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"xce/lib/api/rpc"
	"xce/lib/clusterauth"
)

// The provisioner daemons' calls (`xced provisioner`, role P of the
// cluster handshake): the lease, demand and records calls go to the
// provisioners' ledger (lib/provision.Ledger, the controller's Supply when
// the configuration has providers); the host calls are the controller's.

// ProvisionerLedger is the part of the Supply a provisioner talks to.
type ProvisionerLedger interface {
	Sync(ctx context.Context, req *rpc.ProvisionerSyncRequest) (*rpc.ProvisionerSyncReply, error)
	Records(ctx context.Context, req *rpc.ProvisionerRecordsRequest) (*rpc.ProvisionerRecordsReply, error)
	Put(ctx context.Context, req *rpc.ProvisionerPutRequest) (*rpc.ProvisionerPutReply, error)
}

func (s *ClusterService) ledger(ctx context.Context) (ProvisionerLedger, error) {
	if !clusterauth.PeerIsProvisioner(ctx) {
		return nil, status.Error(codes.PermissionDenied, "only a provisioner (holding the provisioner token) may make this call")
	}
	s.c.mu.Lock()
	l, ok := s.c.supply.(ProvisionerLedger)
	s.c.mu.Unlock()
	if !ok {
		return nil, status.Error(codes.FailedPrecondition, "the controller's configuration has no providers")
	}
	return l, nil
}

func ledgerError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codes.FailedPrecondition, err.Error())
}

// ProvisionerSync renews a provisioner's leases and answers the demand.
func (s *ClusterService) ProvisionerSync(ctx context.Context, req *rpc.ProvisionerSyncRequest) (*rpc.ProvisionerSyncReply, error) {
	l, err := s.ledger(ctx)
	if err != nil {
		return nil, err
	}
	if req.Yield {
		return nil, status.Error(codes.InvalidArgument, "only the controller's own provisioner yields")
	}
	rep, err := l.Sync(ctx, req)
	return rep, ledgerError(err)
}

// ProvisionerRecords reads the provisioners' records.
func (s *ClusterService) ProvisionerRecords(ctx context.Context, req *rpc.ProvisionerRecordsRequest) (*rpc.ProvisionerRecordsReply, error) {
	l, err := s.ledger(ctx)
	if err != nil {
		return nil, err
	}
	rep, err := l.Records(ctx, req)
	return rep, ledgerError(err)
}

// ProvisionerPut writes a provider's records.
func (s *ClusterService) ProvisionerPut(ctx context.Context, req *rpc.ProvisionerPutRequest) (*rpc.ProvisionerPutReply, error) {
	l, err := s.ledger(ctx)
	if err != nil {
		return nil, err
	}
	rep, err := l.Put(ctx, req)
	return rep, ledgerError(err)
}

// ProvisionerHost asks about or acts on a host for a provisioner.
func (s *ClusterService) ProvisionerHost(ctx context.Context, req *rpc.ProvisionerHostRequest) (*rpc.ProvisionerHostReply, error) {
	if _, err := s.ledger(ctx); err != nil {
		return nil, err
	}
	return s.c.ProvisionerHost(ctx, req)
}

// ProvisionerHost is a provisioner's question about a host, or its
// release or removal; only a provisioned host (its worker named an
// instance) is released or removed.
func (c *Controller) ProvisionerHost(_ context.Context, req *rpc.ProvisionerHostRequest) (*rpc.ProvisionerHostReply, error) {
	switch req.Op {
	case rpc.ProvisionerHostRequest_STATE:
		hs := c.Host(req.Name)
		return &rpc.ProvisionerHostReply{Joined: hs.Joined, Instance: hs.Instance, Running: int32(hs.Running), Drained: hs.Drained}, nil
	case rpc.ProvisionerHostRequest_RELEASE, rpc.ProvisionerHostRequest_FORGET:
		c.mu.Lock()
		h := c.hosts[req.Name]
		static := h != nil && h.instance == ""
		c.mu.Unlock()
		if static {
			return nil, status.Errorf(codes.PermissionDenied, "%s is not a provisioned host", req.Name)
		}
		if req.Op == rpc.ProvisionerHostRequest_FORGET {
			c.Forget(req.Name)
			return &rpc.ProvisionerHostReply{}, nil
		}
		return &rpc.ProvisionerHostReply{Released: c.Release(req.Name)}, nil
	case rpc.ProvisionerHostRequest_KICK:
		c.Kick()
		return &rpc.ProvisionerHostReply{}, nil
	}
	return nil, status.Errorf(codes.InvalidArgument, "unknown host operation %d", req.Op)
}
